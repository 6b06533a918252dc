import type { SseEvent } from '@kode/providers/adapter'
import { expect, test } from 'vitest'
import { SseDecoder } from '../../src/transport/sse.js'

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

test('an event handed out is no longer held: its data slices a whole network chunk', () => {
  const decoder = new SseDecoder()
  decoder.feed(bytes('data: 1\n\ndata: 2\n\ndata: 3\n\n'))
  const taken = [decoder.next(), decoder.next()]
  // White-box on purpose: what matters is what the queue still references, not what it returns.
  const queue = (decoder as unknown as { queue: unknown[] }).queue
  expect(taken.map((e) => e?.data)).toEqual(['1', '2'])
  expect(queue.filter((e) => taken.includes(e as SseEvent))).toEqual([])
  expect(drain(decoder).map((e) => e.data)).toEqual(['3'])
  expect(queue.filter((e) => e !== undefined)).toEqual([])
})
