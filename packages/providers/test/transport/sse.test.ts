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

test('CR line endings: the event a last lone CR completes is delivered when the body ends', () => {
  const decoder = new SseDecoder()
  decoder.feed(bytes('data: 1\r\rdata: 2\r\r'))
  expect(drain(decoder).map((e) => e.data)).toEqual(['1'])
  expect(decoder.end()).toBe(true)
  expect(drain(decoder).map((e) => e.data)).toEqual(['2'])
  expect(decoder.end()).toBe(false)
})

test('at the end, a line a lone CR ends without a blank line is still no event', () => {
  const decoder = new SseDecoder()
  decoder.feed(bytes('data: 1\r\rdata: 2\r'))
  decoder.end()
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
  const queue = decoder.events.slots
  expect(taken.map((e) => e?.data)).toEqual(['1', '2'])
  expect(queue.filter((e) => taken.includes(e as SseEvent))).toEqual([])
  expect(drain(decoder).map((e) => e.data)).toEqual(['3'])
  expect(queue.filter((e) => e !== undefined)).toEqual([])
})

test('every split of a stream into two chunks gives the same events, delivered as soon as complete', () => {
  const text = 'event: a\ndata: 1\n\n: ping\ndata: 2\ndata: 3\n\ndata: 4\r\n\r\ndata: 5\n\n'
  const whole = new SseDecoder()
  whole.feed(bytes(text))
  const expected = drain(whole)
  expect(expected.map((e) => e.data)).toEqual(['1', '2\n3', '4', '5'])
  const ends = [...text.matchAll(/\r?\n\r?\n/g)].map((m) => m.index + m[0].length)
  expect(ends).toHaveLength(expected.length)
  for (let at = 0; at <= text.length; at++) {
    const decoder = new SseDecoder()
    decoder.feed(bytes(text.slice(0, at)))
    const first = drain(decoder)
    // Whatever was complete in the first chunk is out before the second arrives.
    expect(first.length, `split at ${at}`).toBe(ends.filter((end) => end <= at).length)
    decoder.feed(bytes(text.slice(at)))
    expect([...first, ...drain(decoder)], `split at ${at}`).toEqual(expected)
  }
})

test("the parser never gets a chunk ending in a non-empty line's LF", () => {
  // It would read one character past the end there, which deoptimizes its main loop.
  const decoder = new SseDecoder()
  const fed: string[] = []
  // White-box on purpose: the property is about what the parser is handed.
  const parser = (decoder as unknown as { parser: { feed(text: string): void } }).parser
  const feed = parser.feed.bind(parser)
  parser.feed = (text) => {
    fed.push(text)
    feed(text)
  }
  for (const chunk of ['data: 1\n', '\ndata: 2\n', '\n', 'data: 3\n\n']) decoder.feed(bytes(chunk))
  expect(fed).toEqual(['data: 1', '\n\ndata: 2', '\n\n', 'data: 3\n\n'])
  expect(drain(decoder).map((e) => e.data)).toEqual(['1', '2', '3'])
})
