import type { ClientConfig, ProviderError, RetryInfo } from '@kode/providers'
import { frameChat } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, collect, fixture, openedFetch, streamOf, testClient, useServer } from '../helpers.js'

// A failure inside a 200 stream carries the request id of that response, like an HTTP error does.

const server = useServer()
const client = (config: Partial<ClientConfig> = {}) =>
  testClient(server(), { api: 'openai-chat', model: 'gpt-4.1', ...config })
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e as ProviderError,
  )
const TEXT = fixture('openai-chat', 'kode-interleaved-reasoning')

describe('the request id of the response is on errors raised while reading it', () => {
  test('an error event inside an Anthropic stream (request-id)', async () => {
    server().enqueue(
      streamOf('anthropic', fixture('anthropic', 'kode-in-stream-error'), {
        headers: { 'request-id': 'req_ant_1' },
      }),
    )
    const error = await caught(client({ api: 'anthropic', model: 'claude-sonnet-4-5' }).complete(ask()))
    expect(error).toMatchObject({ code: 'overloaded_error', requestId: 'req_ant_1' })
  })

  test('an error chunk inside a Chat Completions stream (x-request-id)', async () => {
    server().enqueue({
      body: frameChat(fixture('openai-chat', 'kode-in-stream-error'), { done: false }),
      headers: { 'x-request-id': 'req_oai_1' },
    })
    const error = await caught(client().complete(ask()))
    expect(error).toMatchObject({ code: 'server_error', requestId: 'req_oai_1' })
  })

  test('a stream cut after output (Azure apim-request-id)', async () => {
    server().enqueue({
      body: frameChat(TEXT.slice(0, 2), { done: false }),
      headers: { 'apim-request-id': 'req_azure_1' },
    })
    const error = await caught(collect(client().stream(ask())))
    expect(error).toMatchObject({ code: 'stream_cut', requestId: 'req_azure_1' })
  })

  test('a connection reset after output', async () => {
    const frames = frameChat(TEXT)
    server().enqueue({
      body: frames,
      resetAfterBytes: Buffer.byteLength(frames.slice(0, 2).join('')) + 10,
      headers: { 'x-request-id': 'req_reset' },
    })
    const error = await caught(collect(client().stream(ask())))
    expect(error).toMatchObject({ code: 'network', requestId: 'req_reset' })
  })

  test('a stall', async () => {
    server().enqueue(
      streamOf('openai-chat', TEXT, { stallAfterBytes: 0, headers: { 'x-request-id': 'req_stall' } }),
    )
    // The headers (and their id) are in before the 50 ms watchdog starts: it can only fire on the stall.
    const fetch = await openedFetch(server())
    const error = await caught(
      client({ fetch, idleTimeoutMs: 50, retry: { maxAttempts: 1 } }).complete(ask()),
    )
    expect(error).toMatchObject({ code: 'timeout', requestId: 'req_stall' })
  })

  test('a second message spliced into an Anthropic stream', async () => {
    server().enqueue(
      streamOf('anthropic', fixture('anthropic', 'spliced-message-start'), {
        headers: { 'request-id': 'req_splice' },
      }),
    )
    const error = await caught(
      collect(client({ api: 'anthropic', model: 'claude-sonnet-4-5' }).stream(ask())),
    )
    expect(error).toMatchObject({ code: 'stream_spliced', requestId: 'req_splice' })
  })
})

test('each attempt reports the id of its own response, and none when its response had none', async () => {
  const cutBeforeOutput = frameChat(['{"id":"c","choices":[{"index":0,"delta":{"role":"assistant"}}]}'], {
    done: false,
  })
  server().enqueue(
    { body: cutBeforeOutput, headers: { 'x-request-id': 'req_first' } },
    { body: cutBeforeOutput },
    { body: frameChat(TEXT.slice(0, 2), { done: false }), headers: { 'x-request-id': 'req_third' } },
  )
  const retries: RetryInfo[] = []
  const error = await caught(collect(client().stream(ask(), { onRetry: (info) => retries.push(info) })))
  expect(retries.map((r) => [r.error.code, r.error.requestId])).toEqual([
    ['stream_cut', 'req_first'],
    ['stream_cut', undefined],
  ])
  expect(error).toMatchObject({ code: 'stream_cut', requestId: 'req_third' })
})

describe('a request id header that echoes the API key is kept without it', () => {
  // A gateway may build its request id from what the request carried; the key must not ride out on it.
  const KEY = 'sk-test-key-0123456789'
  const echoed = { 'x-request-id': `req-${KEY}` }

  test.each([
    ['an HTTP error', { status: 401, headers: echoed, body: '{}' }],
    [
      'a 200 that is not an event stream',
      { headers: { ...echoed, 'content-type': 'application/json' }, body: '{}' },
    ],
    ['a redirect without a Location', { status: 302, headers: echoed }],
    [
      'a stream cut after output',
      streamOf('openai-chat', TEXT, { headers: echoed, resetAfterBytes: 700, chunks: false }),
    ],
  ])('%s', async (_name, response) => {
    server().enqueue(response)
    const error = await caught(client({ apiKey: KEY }).complete(ask()))
    expect(error?.requestId).toBe('req-[redacted]')
    expect(error?.message).not.toContain(KEY)
  })
})
