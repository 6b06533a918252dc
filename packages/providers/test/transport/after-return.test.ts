import type { StreamItem } from '@kode/protocol'
import { createClient, readReadyItems, registerProvider } from '@kode/providers'
import { frameChat, sseFrame } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, deterministic, testClient, useServer } from '../helpers.js'

// Once `return()` has been called (a `break` out of a for-await does it), the stream is over for
// the consumer: every `next()` resolves the end and nothing more is handed out, whatever the
// stream had left queued when the consumer went away: items, a `done`, or an error to throw.

const server = useServer()
const END = { done: true, value: undefined }

/**
 * A made-up wire that can queue several items at once: `say` emits a text delta per entry, `call`
 * starts a tool call without an id (announced only when the response completes, just before
 * `done`), `end` is the stop reason, and `fail` throws while mapping, after what it emitted.
 */
registerProvider('queueing-wire', (config) => ({
  defaultBaseUrl: 'http://unused',
  buildRequest: () => ({ path: '/queue', headers: {}, body: {} }),
  createEventMapper: () => (event, out) => {
    const data = JSON.parse(event.data) as { say?: string[]; call?: string; end?: string; fail?: string }
    for (const text of data.say ?? []) out.text(text)
    if (data.call) out.toolCall(0, undefined, data.call)
    if (data.end) out.stop(data.end, 'stop')
    if (data.fail) throw new Error(`${config.model}: ${data.fail}`)
  },
}))

const queueingClient = () =>
  createClient({ api: 'queueing-wire', model: 'q', baseUrl: server().url, ...deterministic() })

/** Several `next()` calls, none waiting for the one before. */
const severalNext = (stream: AsyncIterator<StreamItem>) =>
  Promise.allSettled([stream.next(), stream.next(), stream.next()])

const allEnd = [
  { status: 'fulfilled', value: END },
  { status: 'fulfilled', value: END },
  { status: 'fulfilled', value: END },
]

describe('after return()', () => {
  test('a stream that completed with items still queued hands out none of them', async () => {
    server().enqueue({
      body: [sseFrame('{"say":["Hi"]}'), sseFrame('{"call":"lookup","end":"finished"}')],
    })
    const stream = queueingClient().stream(ask())[Symbol.asyncIterator]()
    expect((await stream.next()).value).toMatchObject({ type: 'text_delta', text: 'Hi' })
    // The body ended: the late tool call comes out, and its `done` waits behind it.
    expect((await stream.next()).value).toMatchObject({ type: 'tool_call_start', toolName: 'lookup' })
    expect(await stream.return?.()).toEqual(END)
    expect(await severalNext(stream)).toEqual(allEnd)
  })

  test('a stream that failed with items still queued hands out neither them nor the error', async () => {
    server().enqueue({
      body: [sseFrame('{"say":["x"]}'), sseFrame('{"say":["a","b"],"fail":"unreadable"}')],
    })
    const stream = queueingClient().stream(ask())[Symbol.asyncIterator]()
    expect((await stream.next()).value).toMatchObject({ text: 'x' })
    // The mapping failed after queueing `a` and `b`: they come out first, then the error would.
    expect((await stream.next()).value).toMatchObject({ text: 'a' })
    expect(await stream.return?.()).toEqual(END)
    expect(await severalNext(stream)).toEqual(allEnd)
  })

  test('without return(), the same failed stream hands out the queued items, then the error', async () => {
    server().enqueue({
      body: [sseFrame('{"say":["x"]}'), sseFrame('{"say":["a","b"],"fail":"unreadable"}')],
    })
    const stream = queueingClient().stream(ask())[Symbol.asyncIterator]()
    const texts = [await stream.next(), await stream.next(), await stream.next()].map(
      (result) => result.value?.type === 'text_delta' && result.value.text,
    )
    expect(texts).toEqual(['x', 'a', 'b'])
    await expect(stream.next()).rejects.toMatchObject({ code: 'invalid_response', retryable: false })
    expect(await stream.next()).toEqual(END)
  })

  test('an abort after return(), during the retry wait of a pending next(), hands out no aborted done', async () => {
    server().enqueue({ status: 503, headers: { 'retry-after-ms': '200' }, body: '{}' })
    const controller = new AbortController()
    let retrying!: () => void
    const retried = new Promise<void>((resolve) => {
      retrying = resolve
    })
    const stream = testClient(server(), { api: 'openai-chat', model: 'gpt-4.1' })
      .stream(ask(), { signal: controller.signal, onRetry: () => retrying() })
      [Symbol.asyncIterator]()
    const pending = stream.next()
    await retried
    expect(await stream.return?.()).toEqual(END)
    controller.abort()
    expect(await pending).toEqual(END)
    expect(await severalNext(stream)).toEqual(allEnd)
    expect(server().requests).toHaveLength(1)
  })

  test('an aborted stream stays ended after return()', async () => {
    // The first event arrives, then the server stalls with the connection open.
    const frames = frameChat(['{"choices":[{"index":0,"delta":{"content":"one"}}]}', '{"choices":[]}'])
    server().enqueue({ body: frames, stallAfterBytes: frames[0]!.length })
    const controller = new AbortController()
    const stream = testClient(server(), { api: 'openai-chat', model: 'gpt-4.1' })
      .stream(ask(), { signal: controller.signal })
      [Symbol.asyncIterator]()
    expect((await stream.next()).value).toMatchObject({ type: 'text_delta', text: 'one' })
    controller.abort()
    expect((await stream.next()).value).toMatchObject({ type: 'done', message: { stopReason: 'aborted' } })
    expect(await stream.return?.()).toEqual(END)
    expect(await severalNext(stream)).toEqual(allEnd)
  })

  test('mid-stream: return() cancels the request and every later next() is the end', async () => {
    const payloads = Array.from(
      { length: 50 },
      (_, i) => `{"choices":[{"index":0,"delta":{"content":"${i}"}}]}`,
    )
    server().enqueue({ body: frameChat(payloads), chunks: { maxBytes: 40, seed: 1 }, chunkDelayMs: 20 })
    const stream = testClient(server(), { api: 'openai-chat', model: 'gpt-4.1' })
      .stream(ask())
      [Symbol.asyncIterator]()
    expect((await stream.next()).value).toMatchObject({ type: 'text_delta', text: '0' })
    expect(await stream.return?.()).toEqual(END)
    expect(await severalNext(stream)).toEqual(allEnd)
    expect(await server().ended(0)).toBe('client_closed')
  })

  test('readReadyItems: a batch held past the reader’s return() yields nothing more', async () => {
    server().enqueue({
      body: [sseFrame('{"say":["Hi"]}'), sseFrame('{"call":"lookup","end":"finished"}')],
    })
    const reader = readReadyItems(queueingClient().stream(ask()))
    const first = await reader.next()
    expect(first.done || [...first.value].map((item) => item.type)).toEqual(['text_delta'])
    const second = await reader.next()
    if (second.done) throw new Error('the response ended before the tool call')
    const held = second.value[Symbol.iterator]()
    expect(held.next().value).toMatchObject({ type: 'tool_call_start' })
    expect(await reader.return()).toEqual(END)
    expect(held.next()).toEqual(END)
  })
})
