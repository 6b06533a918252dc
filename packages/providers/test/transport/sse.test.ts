import { SseDecoder, type SseEvent } from '@kode/providers'
import { expect, test } from 'vitest'

const bytes = (text: string) => new TextEncoder().encode(text)

function drain(decoder: SseDecoder): SseEvent[] {
  const out: SseEvent[] = []
  for (let e = decoder.next(); e !== undefined; e = decoder.next()) out.push(e)
  return out
}

test('joins events, lines and UTF-8 characters split across chunks', () => {
  const body = bytes('event: a\ndata: {"t":"÷ — “"}\n\ndata: x\n\n')
  const decoder = new SseDecoder()
  for (const byte of body) decoder.feed(Uint8Array.of(byte))
  expect(drain(decoder)).toEqual([
    { event: 'a', data: '{"t":"÷ — “"}', id: undefined },
    { event: undefined, data: 'x', id: undefined },
  ])
})

test('reads CRLF framing and drops comments', () => {
  const decoder = new SseDecoder()
  decoder.feed(bytes(': OPENROUTER PROCESSING\r\n\r\ndata: 1\r\n\r\n'))
  expect(drain(decoder).map((e) => e.data)).toEqual(['1'])
})

test('an event without its blank line is not delivered', () => {
  const decoder = new SseDecoder()
  decoder.feed(bytes('data: 1\n\ndata: 2\n'))
  expect(drain(decoder).map((e) => e.data)).toEqual(['1'])
})
