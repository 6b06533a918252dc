import type { StreamItem } from '@kode/protocol'
import { type ClientConfig, ProviderError, type RetryInfo } from '@kode/providers'
import { frameChat } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, collect, fixture, openedFetch, streamOf, testClient, useServer } from './helpers.js'

const server = useServer()
const client = (config: Partial<ClientConfig> = {}) =>
  testClient(server(), { api: 'openai-chat', model: 'gpt-4.1', ...config })
const TEXT = fixture('openai-chat', 'kode-interleaved-reasoning')
const ok = () => streamOf('openai-chat', TEXT)
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e as ProviderError,
  )

describe('retries before any output', () => {
  test('a connection reset before the first item is retried invisibly', async () => {
    server().enqueue(streamOf('openai-chat', TEXT, { resetAfterBytes: 40 }), ok())
    const retries: RetryInfo[] = []
    const message = await client().complete(ask(), { onRetry: (info) => retries.push(info) })
    expect(message.parts.map((p) => p.type)).toEqual(['text', 'thinking_text', 'text'])
    expect(server().requests).toHaveLength(2)
    expect(retries).toHaveLength(1)
    expect(retries[0]).toMatchObject({ attempt: 1, error: { code: 'network', retryable: true } })
  })

  test('429 with retry-after-ms, then success: waits what the provider asked', async () => {
    server().enqueue(
      {
        status: 429,
        headers: { 'retry-after-ms': '20' },
        body: '{"error":{"message":"slow down","code":"rate_limit_exceeded"}}',
      },
      ok(),
    )
    const retries: RetryInfo[] = []
    const message = await client().complete(ask(), { onRetry: (info) => retries.push(info) })
    expect(message.stopReason).toBe('stop')
    expect(retries).toEqual([{ attempt: 1, delayMs: 20, error: expect.objectContaining({ status: 429 }) }])
  })

  test('Retry-After beyond maxRetryAfterMs is capped', async () => {
    server().enqueue({ status: 503, headers: { 'retry-after': '3600' }, body: '{}' }, ok())
    const retries: RetryInfo[] = []
    await client({ retry: { maxRetryAfterMs: 5 } }).complete(ask(), { onRetry: (info) => retries.push(info) })
    expect(retries[0]?.delayMs).toBe(5)
  })

  test('an unreadable Retry-After backs off as if there were none', async () => {
    server().enqueue({ status: 429, headers: { 'retry-after': 'garbage 12' }, body: '{}' }, ok())
    const retries: RetryInfo[] = []
    const retry = { baseDelayMs: 40, maxDelayMs: 40, maxRetryAfterMs: 100 }
    await client({ retry }).complete(ask(), { onRetry: (info) => retries.push(info) })
    expect(retries[0]?.error.retryAfterMs).toBeUndefined()
    expect(retries[0]?.delayMs).toBeGreaterThanOrEqual(20)
    expect(retries[0]?.delayMs).toBeLessThanOrEqual(40)
  })

  test('500 on every attempt: gives up after maxAttempts with the last error', async () => {
    server().handle(() => ({ status: 500, body: '{"error":{"message":"boom","type":"server_error"}}' }))
    const retries: RetryInfo[] = []
    const error = await caught(
      client({ retry: { maxAttempts: 3, baseDelayMs: 1 } }).complete(ask(), {
        onRetry: (i) => retries.push(i),
      }),
    )
    expect(error).toMatchObject({
      status: 500,
      code: 'server_error',
      retryable: true,
      providerMessage: 'boom',
    })
    expect(server().requests).toHaveLength(3)
    expect(retries.map((r) => r.attempt)).toEqual([1, 2])
  })

  test('a stream that ends without its terminal event before any output is retried', async () => {
    const cut = frameChat(['{"id":"c","choices":[{"index":0,"delta":{"role":"assistant"}}]}'], {
      done: false,
    })
    server().enqueue({ body: cut }, ok())
    const message = await client().complete(ask())
    expect(message.stopReason).toBe('stop')
    expect(server().requests).toHaveLength(2)
  })
})

test('a server framing events with CR alone: its last event, the terminal one, is read', async () => {
  const frames = streamOf('openai-chat', TEXT).body as string[]
  server().enqueue({ body: frames.map((frame) => frame.replace(/\n/g, '\r')) })
  const message = await client({ retry: { maxAttempts: 1 } }).complete(ask())
  expect(message.stopReason).toBe('stop')
  expect(message.parts.map((p) => p.type)).toEqual(['text', 'thinking_text', 'text'])
})

describe('failures that are not retried', () => {
  test('401: no retry, a clear message, and the key appears nowhere', async () => {
    const key = 'sk-live-secret-abcdef123456'
    server().enqueue({
      status: 401,
      headers: { 'x-request-id': 'req_9' },
      body: JSON.stringify({
        error: { message: `Incorrect API key provided: ${key}.`, code: 'invalid_api_key' },
      }),
    })
    const error = await caught(client({ apiKey: key }).complete(ask()))
    expect(server().requests).toHaveLength(1)
    expect(error?.message).toBe(
      'openai-chat responded 401 invalid_api_key: Incorrect API key provided: [redacted]. Check the API key. [request req_9]',
    )
    expect(error).toMatchObject({ status: 401, retryable: false, requestId: 'req_9' })
    const everything = JSON.stringify({ ...error, message: error?.message, stack: error?.stack })
    expect(everything).not.toContain(key)
    expect(server().requests[0]?.headers.authorization).toBe(`Bearer ${key}`)
  })

  test('429 insufficient_quota: the quota is spent, not busy, so it is not retried', async () => {
    // OpenAI's answer once the account's credits or monthly spend are used up.
    const body =
      '{\n    "error": {\n        "message": "You exceeded your current quota, please check your plan and billing details.",\n        "type": "insufficient_quota",\n        "param": null,\n        "code": "insufficient_quota"\n    }\n}\n'
    server().enqueue({ status: 429, headers: { 'x-request-id': 'req_q' }, body, chunks: false })
    const error = await caught(client().complete(ask()))
    expect(server().requests).toHaveLength(1)
    expect(error).toMatchObject({ status: 429, code: 'insufficient_quota', retryable: false })
    expect(error?.message).toBe(
      'openai-chat responded 429 insufficient_quota: You exceeded your current quota, please check your plan and billing details. [request req_q]',
    )
  })

  test('429 insufficient_quota with x-should-retry: true is retried, as the provider says', async () => {
    const body = '{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}'
    server().enqueue({ status: 429, headers: { 'x-should-retry': 'true' }, body }, ok())
    const message = await client().complete(ask())
    expect(server().requests).toHaveLength(2)
    expect(message.parts.map((p) => p.type)).toEqual(['text', 'thinking_text', 'text'])
  })

  test('401 with no key, or an empty one: the message says which, as a sentence of its own', async () => {
    const body = JSON.stringify({
      type: 'error',
      error: { type: 'authentication_error', message: 'x-api-key header is required' },
    })
    server().enqueue({ status: 401, body }, { status: 401, body })
    const anthropic = (apiKey: string | undefined) =>
      testClient(server(), {
        api: 'anthropic',
        model: 'claude-sonnet-4-5',
        apiKey,
        retry: { maxAttempts: 1 },
      })
    const missing = await caught(anthropic(undefined).complete(ask()))
    const empty = await caught(anthropic('').complete(ask()))
    expect([missing?.message, empty?.message]).toEqual([
      'anthropic responded 401 authentication_error: x-api-key header is required. No API key was sent: pass apiKey to createClient.',
      'anthropic responded 401 authentication_error: x-api-key header is required. The apiKey given to createClient is empty.',
    ])
  })

  test('404: the message names the URL the request went to, so a baseUrl missing its /v1 shows', async () => {
    // What api.anthropic.com answers to POST /messages, the path without its /v1.
    const body = JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'Not Found' } })
    server().enqueue({ status: 404, body })
    const anthropic = testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' })
    const error = await caught(anthropic.complete(ask()))
    expect(server().requests.map((r) => r.url)).toEqual(['/messages'])
    expect(error?.message).toBe(
      `anthropic responded 404 not_found_error: Not Found. Check the model id and baseUrl: the request went to ${server().url}/messages.`,
    )
    expect(error).toMatchObject({ status: 404, retryable: false, providerMessage: 'Not Found' })
  })

  test('404 on a base URL with a query: the quoted URL leaves the query out', async () => {
    server().enqueue({ status: 404, body: 'not found' })
    const chat = client({ baseUrl: `${server().url}/v2?api_key=sk-secret-in-query-123` })
    const error = await caught(chat.complete(ask()))
    expect(error?.message).toBe(
      `openai-chat responded 404: not found. Check the model id and baseUrl: the request went to ${server().url}/v2/chat/completions.`,
    )
  })

  test('a reset after output was delivered throws with the partial message, without retrying', async () => {
    const frames = frameChat(TEXT)
    const cutAt = Buffer.byteLength(frames.slice(0, 2).join(''))
    server().enqueue({ body: frames, resetAfterBytes: cutAt + 10 })
    const items: StreamItem[] = []
    const run = async () => {
      for await (const item of client().stream(ask())) items.push(item)
    }
    const error = await caught(run())
    expect(items.map((i) => i.type)).toEqual(['text_delta', 'thinking_delta'])
    expect(error).toMatchObject({ code: 'network', retryable: true })
    expect(error?.partial).toMatchObject({
      stopReason: 'error',
      isApiError: true,
      parts: [
        { type: 'text', text: 'Let me check. ' },
        { type: 'thinking_text', text: 'The user wants ' },
      ],
    })
    expect(server().requests).toHaveLength(1)
  })

  test('a stream that ends early after output is a stream_cut error', async () => {
    server().enqueue({ body: frameChat(TEXT.slice(0, 2), { done: false }) })
    const error = await caught(collect(client().stream(ask())))
    expect(error).toMatchObject({ code: 'stream_cut', partial: { stopReason: 'error' } })
    expect(error?.message).toBe('openai-chat: the stream ended before the response was complete')
  })

  test('a 200 that is JSON instead of an event stream is an invalid_response', async () => {
    server().enqueue({ headers: { 'content-type': 'application/json' }, body: '{"choices":[]}' })
    const error = await caught(client().complete(ask()))
    expect(error).toMatchObject({ code: 'invalid_response', retryable: false })
  })

  // 40 MiB through a real socket: seconds on a machine busy with the rest of the suite.
  test('a line that never ends is an invalid_response once it passes 32 MiB, after the items before it', async () => {
    const piece = 'x'.repeat(1024 * 1024)
    const endless = ['data: ', ...Array.from({ length: 40 }, () => piece)]
    const body = [...frameChat(TEXT.slice(0, 2), { done: false }), ...endless]
    server().enqueue({ body, chunks: { maxBytes: 256 * 1024 } })
    const items: StreamItem[] = []
    const run = async () => {
      for await (const item of client().stream(ask())) items.push(item)
    }
    const error = await caught(run())
    expect(items.map((i) => i.type)).toEqual(['text_delta', 'thinking_delta'])
    expect(error).toMatchObject({ code: 'invalid_response', retryable: false })
    expect(error?.message).toBe('openai-chat: the stream sent an event longer than 33554432 characters')
    expect(error?.partial?.parts).toEqual([
      { type: 'text', text: 'Let me check. ' },
      { type: 'thinking_text', text: 'The user wants ' },
    ])
    expect(server().requests).toHaveLength(1)
  }, 30_000)

  test('an event that is not JSON is an invalid_response quoting it', async () => {
    server().enqueue({ body: 'data: {"id": oops}\n\n' })
    const error = await caught(client({ retry: { maxAttempts: 1 } }).complete(ask()))
    expect(error?.message).toBe('openai-chat: the stream sent an event that is not JSON: {"id": oops}')
  })
})

describe('stalls', () => {
  test('a stalled stream fails with a timeout instead of hanging', async () => {
    server().enqueue(streamOf('openai-chat', TEXT, { stallAfterBytes: 0 }))
    // The headers are in before the 50 ms watchdog starts: on a loaded machine it could otherwise
    // fire before the request reached the server, which would then never see it close.
    const fetch = await openedFetch(server())
    const error = await caught(
      client({ fetch, idleTimeoutMs: 50, retry: { maxAttempts: 1 } }).complete(ask()),
    )
    expect(error).toMatchObject({ code: 'timeout', retryable: true })
    expect(await server().ended(0)).toBe('client_closed')
  })

  test('a stall ends with a timeout, its connection closed, also when fetch no longer follows the signal', async () => {
    server().enqueue(streamOf('openai-chat', TEXT, { stallAfterBytes: 0 }))
    // As Deno's fetch, once a collection cut the request's signal from it: aborting reaches nothing.
    const fetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, { ...init, signal: null })
    const error = await caught(
      client({ fetch, idleTimeoutMs: 50, retry: { maxAttempts: 1 } }).complete(ask()),
    )
    expect(error).toMatchObject({ code: 'timeout', retryable: true })
    expect(await server().ended(0)).toBe('client_closed')
  })

  test('a timeout before the headers ends the wait when fetch no longer follows the signal, and the late response is closed', async () => {
    // The headers come after the 50 ms watchdog fired: an abort that reaches nothing must not
    // leave the wait, then the read of the late response, hanging for ever.
    server().enqueue({ ...streamOf('openai-chat', TEXT, { stallAfterBytes: 0 }), delayMs: 300 })
    const fetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, { ...init, signal: null })
    const error = await caught(
      client({ fetch, idleTimeoutMs: 50, retry: { maxAttempts: 1 } }).complete(ask()),
    )
    expect(error).toMatchObject({ code: 'timeout', retryable: true })
    expect(await server().ended(0)).toBe('client_closed')
  })

  test('an error response whose body stalls is still that HTTP error, quoting what arrived', async () => {
    const body = '{"error":{"message":"This model is not available in your region"}}'
    server().enqueue({
      status: 403,
      body,
      stallAfterBytes: 20,
      headers: { 'content-type': 'application/json' },
    })
    // The headers and the 20 bytes are in before the 50 ms watchdog starts: it can only fire on the stall.
    const fetch = await openedFetch(server(), 20)
    const error = await caught(
      client({ fetch, idleTimeoutMs: 50, retry: { maxAttempts: 1 } }).complete(ask()),
    )
    expect(error).toMatchObject({ status: 403, retryable: false })
    // It broke off: it was not cut at the reading limit.
    expect(error?.providerMessage).toBe(`${body.slice(0, 20)}… (the rest did not arrive)`)
    expect(await server().ended(0)).toBe('client_closed')
  })

  test('an error body that keeps arriving, slower in all than idleTimeoutMs, is not a stall', async () => {
    const message = 'This model is not available in your region; ask your administrator for access.'
    const body = JSON.stringify({ error: { message, type: 'permission_error' } })
    // Six pieces 100 ms apart: 500 ms in all, each gap well under the 400 ms watchdog.
    const pieces = 6
    server().enqueue({
      status: 403,
      body,
      chunks: { maxBytes: Math.ceil(body.length / pieces) + 1, seed: 3 },
      chunkDelayMs: 100,
      headers: { 'content-type': 'application/json' },
    })
    const fetch = await openedFetch(server())
    const error = await caught(
      client({ fetch, idleTimeoutMs: 400, retry: { maxAttempts: 1 } }).complete(ask()),
    )
    expect(error).toMatchObject({ status: 403, code: 'permission_error', providerMessage: message })
  })

  test('a stall before any output is retried like any transient failure', async () => {
    server().enqueue(streamOf('openai-chat', TEXT, { stallAfterBytes: 10 }), ok())
    // Both responses (the first's 10 bytes included) are in before the watchdog starts: it can only
    // fire on the stall, and the retry cannot time out waiting for its headers.
    const fetch = await openedFetch(server(), 10, 0)
    const message = await client({ fetch, idleTimeoutMs: 1_000 }).complete(ask())
    expect(message.stopReason).toBe('stop')
  })

  test('a consumer that pauses longer than idleTimeoutMs between items is not a stall', async () => {
    // An in-memory body (no network, so nothing but the pause is slow) that errors when the
    // request is aborted, as fetch's does: a false timeout would abort it mid-pause.
    const bytes = frameChat(TEXT).map((frame) => new TextEncoder().encode(frame))
    const fetch = async (_url: string | URL | Request, init?: RequestInit) => {
      let next = 0
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          init?.signal?.addEventListener('abort', () => controller.error(init.signal?.reason))
        },
        pull(controller) {
          if (next < bytes.length) controller.enqueue(bytes[next++]!)
          else controller.close()
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    }
    const items: StreamItem[] = []
    for await (const item of client({ fetch, idleTimeoutMs: 200, retry: { maxAttempts: 1 } }).stream(ask())) {
      items.push(item)
      // Busy with the first item for three idle timeouts while the rest of the body waits unread.
      if (items.length === 1) await new Promise((resolve) => setTimeout(resolve, 600))
    }
    expect(items.at(-1)).toMatchObject({ type: 'done', message: { stopReason: 'stop' } })
  })

  test('a stall after output keeps what arrived on the error', async () => {
    const frames = frameChat(TEXT)
    const first = Buffer.byteLength(frames[0]!)
    server().enqueue({ body: frames, stallAfterBytes: first })
    // The headers and the first frame are in before the watchdog starts: it can only fire on the stall.
    const fetch = await openedFetch(server(), first)
    const error = await caught(collect(client({ fetch, idleTimeoutMs: 500 }).stream(ask())))
    expect(error).toMatchObject({
      code: 'timeout',
      partial: { parts: [{ type: 'text', text: 'Let me check. ' }] },
    })
  })
})

describe('abort and cancel', () => {
  test('an already aborted signal ends at once with an aborted done and sends nothing', async () => {
    const items = await collect(client().stream(ask(), { signal: AbortSignal.abort() }))
    expect(items).toEqual([
      { type: 'done', message: expect.objectContaining({ stopReason: 'aborted', parts: [] }) },
    ])
    expect(server().requests).toHaveLength(0)
  })

  test('aborting while waiting for the response ends with an aborted done', async () => {
    server().enqueue(streamOf('openai-chat', TEXT, { delayMs: 5_000 }))
    const controller = new AbortController()
    const pending = collect(client().stream(ask(), { signal: controller.signal }))
    while (server().requests.length === 0) await new Promise((r) => setTimeout(r, 5))
    controller.abort()
    const items = await pending
    expect(items.map((i) => i.type)).toEqual(['done'])
  })

  test('aborting during a retry wait ends with an aborted done', async () => {
    server().enqueue({ status: 503, headers: { 'retry-after': '60' }, body: '{}' })
    const controller = new AbortController()
    const items = await collect(
      client().stream(ask(), { signal: controller.signal, onRetry: () => controller.abort() }),
    )
    expect(items).toEqual([{ type: 'done', message: expect.objectContaining({ stopReason: 'aborted' }) }])
  })

  const abortCases = [
    ['openai-chat', 'kode-interleaved-reasoning'],
    ['openai-chat', 'kode-parallel-tool-calls'],
    ['openai-chat', 'deepseek-tool-call'],
    ['anthropic', 'kode-redacted-thinking-tools'],
    ['anthropic', 'anthropic-clear-thinking.1'],
    ['google', 'kode-thought-signatures'],
    ['openai-responses', 'kode-reasoning-summaries-phase'],
    ['openrouter', 'kode-encrypted-reasoning-tool'],
  ] as const
  for (const [api, name] of abortCases) {
    test(`abort after each stream item of ${api} ${name}: done is aborted and holds what was delivered`, async () => {
      const payloads = fixture(api, name)
      server().handle(() => streamOf(api, payloads))
      const full = await collect(client({ api }).stream(ask()))
      for (let index = 0; index < full.length - 1; index++) {
        const controller = new AbortController()
        const seen: StreamItem[] = []
        for await (const item of client({ api }).stream(ask(), { signal: controller.signal })) {
          seen.push(item)
          if (seen.length === index + 1) controller.abort()
        }
        const done = seen.at(-1)!
        expect(seen).toHaveLength(index + 2)
        expect(done.type === 'done' && done.message.stopReason).toBe('aborted')
        if (done.type !== 'done') continue
        const delivered = seen.slice(0, -1)
        const joined = (type: string) =>
          delivered.map((i) => (i.type === type && 'text' in i ? i.text : '')).join('')
        const partsText = (type: string) =>
          done.message.parts.map((p) => (p.type === type && 'text' in p ? p.text : '')).join('')
        expect(partsText('text')).toBe(joined('text_delta'))
        expect(partsText('thinking_text')).toBe(joined('thinking_delta'))
        for (const item of delivered) {
          if (item.type === 'tool_call_start') {
            expect(done.message.parts).toContainEqual(
              expect.objectContaining({ type: 'tool_call', id: item.toolCallId }),
            )
          }
        }
      }
    })
  }

  test('a response read to its end leaves its request signal alone: there is nothing to cancel', async () => {
    server().enqueue(ok())
    let signal: AbortSignal | undefined
    const fetch: typeof globalThis.fetch = (url, init) => {
      signal = init?.signal ?? undefined
      return globalThis.fetch(url, init)
    }
    const items = await collect(client({ fetch }).stream(ask()))
    expect(items.at(-1)).toMatchObject({ type: 'done', message: { stopReason: 'stop' } })
    expect(signal?.aborted).toBe(false)
  })

  test('aborting a stalled body ends with an aborted done and closes the connection, whatever fetch does with the signal', async () => {
    server().enqueue(streamOf('openai-chat', TEXT, { stallAfterBytes: 500 }))
    // As Deno's fetch, once a collection cut the request's signal from it: aborting reaches nothing.
    const fetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, { ...init, signal: null })
    const controller = new AbortController()
    const items: StreamItem[] = []
    for await (const item of client({ fetch }).stream(ask(), { signal: controller.signal })) {
      items.push(item)
      if (items.length === 1) setTimeout(() => controller.abort(), 0)
    }
    expect(items.at(-1)).toMatchObject({ type: 'done', message: { stopReason: 'aborted' } })
    expect(await server().ended(0)).toBe('client_closed')
  })

  test('breaking out of the loop cancels the HTTP request', async () => {
    const many = Array.from(
      { length: 200 },
      (_, i) => `{"id":"c","choices":[{"index":0,"delta":{"content":"${i} "}}]}`,
    )
    server().enqueue(streamOf('openai-chat', many, { chunkDelayMs: 5 }))
    for await (const item of client().stream(ask())) {
      expect(item.type).toBe('text_delta')
      break
    }
    expect(await server().ended(0)).toBe('client_closed')
  })

  test('return() while next() waits out a retry sends no further request', async () => {
    server().enqueue({ status: 503, headers: { 'retry-after-ms': '100' }, body: '{}' }, ok())
    let retrying!: () => void
    const retried = new Promise<void>((resolve) => {
      retrying = resolve
    })
    const stream = client()
      .stream(ask(), { onRetry: () => retrying() })
      [Symbol.asyncIterator]()
    const pending = stream.next()
    await retried
    await stream.return?.()
    expect(await pending).toEqual({ done: true, value: undefined })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(server().requests).toHaveLength(1)
  })

  test('return() right after next(), while the request is being built, sends nothing', async () => {
    server().enqueue(ok())
    const stream = client().stream(ask())[Symbol.asyncIterator]()
    const pending = stream.next()
    await stream.return?.()
    expect(await pending).toEqual({ done: true, value: undefined })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(server().requests).toHaveLength(0)
  })
})

test('next() calls made while one is pending get the end after its error, not the error again', async () => {
  server().enqueue({ status: 400, body: '{"error":{"message":"bad","code":"bad_request"}}' })
  const stream = client().stream(ask())[Symbol.asyncIterator]()
  const [first, second, third] = await Promise.allSettled([stream.next(), stream.next(), stream.next()])
  expect(first).toMatchObject({ status: 'rejected', reason: { status: 400, code: 'bad_request' } })
  expect(second).toEqual({ status: 'fulfilled', value: { done: true, value: undefined } })
  expect(third).toEqual({ status: 'fulfilled', value: { done: true, value: undefined } })
})

test('an HTTP 400 is a ProviderError and an Error', async () => {
  server().enqueue({ status: 400, body: '{"error":{"message":"bad"}}' })
  const error = await caught(client().complete(ask()))
  expect(ProviderError.is(error)).toBe(true)
  expect(error).toBeInstanceOf(Error)
})

test('an error event read in the same chunk as earlier output still comes after that output', async () => {
  const body = frameChat(fixture('openai-chat', 'kode-in-stream-error'), { done: false }).join('')
  const fetch = async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } })
  const items: StreamItem[] = []
  const run = async () => {
    for await (const item of client({ fetch }).stream(ask())) items.push(item)
  }
  const error = await caught(run())
  expect(items).toEqual([{ type: 'text_delta', text: 'Partial', responseId: 'chatcmpl-kode-err' }])
  expect(error).toMatchObject({
    code: 'server_error',
    partial: { parts: [{ type: 'text', text: 'Partial' }] },
  })
})

test('a Retry-After longer than a timer can wait, with no cap: the retry waits, it is not sent at once', async () => {
  // setTimeout fires at once for a delay past 2^31 - 1 ms; a host that lifted both caps must still
  // get the wait the provider asked for (here ended by an abort), not an immediate retry.
  server().enqueue({ status: 429, headers: { 'retry-after': String(2 ** 32 / 1000) }, body: '{}' }, ok())
  const controller = new AbortController()
  const retry = { maxRetryAfterMs: Number.POSITIVE_INFINITY, budgetMs: Number.POSITIVE_INFINITY }
  const items = await collect(
    client({ retry }).stream(ask(), {
      signal: controller.signal,
      onRetry: () => setTimeout(() => controller.abort(), 50),
    }),
  )
  expect(items.map((item) => item.type)).toEqual(['done'])
  expect(items[0]).toMatchObject({ message: { stopReason: 'aborted' } })
  expect(server().requests).toHaveLength(1)
})
