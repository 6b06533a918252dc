import { inspect } from 'node:util'
import { type ClientConfig, ProviderError } from '@kode/providers'
import { parseEventJson } from '@kode/providers/adapter'
import { describe, expect, test } from 'vitest'
import { errorFromResponse, errorFromThrown } from '../../src/transport/failures.js'
import { ask, testClient, useServer } from '../helpers.js'

// "Nothing the runtime persists or prints contains an API key": console.error prints an error's
// message, stack and whole cause chain, which is what `inspect` shows here.

const KEY = 'sk-live-secret-abcdef123456'
const ctx = { label: 'acme', apiKey: KEY, now: () => 0 }
/** What a cut made before redacting would leave behind. */
const PREFIX = KEY.slice(0, 10)

const printed = (error: unknown) => inspect(error, { depth: 20 })
/** `head` padded so that the key starts `PREFIX.length` characters before `limit`. */
const keyAcross = (limit: number, head: string, tail = '') =>
  `${head}${'x'.repeat(limit - PREFIX.length - head.length)}${KEY}${tail}`
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e as ProviderError,
  )

describe('a cause that quotes the key', () => {
  test('errorFromThrown keeps a copy of the cause with the key redacted, its name and code', () => {
    const socket = Object.assign(new Error(`proxy refused Bearer ${KEY}`), { code: 'ECONNREFUSED' })
    const thrown = new TypeError(`Headers.append: "Bearer ${KEY}" is an invalid header value.`, {
      cause: socket,
    })
    const error = errorFromThrown(thrown, ctx)
    expect(printed(error)).not.toContain(PREFIX)
    const cause = error.cause as Error & { code?: string; cause?: Error & { code?: string } }
    expect(cause).toBeInstanceOf(Error)
    expect(cause.name).toBe('TypeError')
    expect(cause.message).toBe('Headers.append: "Bearer [redacted]" is an invalid header value.')
    expect(cause.cause).toMatchObject({ message: 'proxy refused Bearer [redacted]', code: 'ECONNREFUSED' })
  })

  test('a cause that does not quote the key is kept as it is', () => {
    const thrown = new TypeError('fetch failed')
    expect(errorFromThrown(thrown, ctx).cause).toBe(thrown)
  })

  test('a key with whitespace around it is redacted where HTTP trimmed it', () => {
    const key = ` ${KEY}\n`
    const error = errorFromThrown(new TypeError(`"${KEY}" is an invalid header value.`), {
      ...ctx,
      apiKey: key,
    })
    expect(printed(error)).not.toContain(PREFIX)
  })
})

describe('a fetch that throws something other than an Error', () => {
  const server = useServer()

  // A fetch wrapper may reject with a plain object (its own record of the request, headers and
  // all) or a value without a prototype: kept as the cause, it would print the key.
  test.each([
    [
      'an object that keeps the request headers',
      { code: 'E_PROXY', request: { headers: { authorization: `Bearer ${KEY}` } } },
    ],
    ['an object whose message quotes the key', { name: 'ProxyError', message: `refused ${KEY}` }],
    ['an object without a prototype', Object.assign(Object.create(null), { detail: KEY })],
  ])('%s: the error and its cause are printed without the key', async (_name, thrown) => {
    const fetch = (() => Promise.reject(thrown)) as unknown as typeof globalThis.fetch
    const client = testClient(server(), { api: 'openai-chat', model: 'gpt-4.1', apiKey: KEY, fetch })
    const error = await caught(client.complete(ask()))
    expect(error).toMatchObject({ code: 'network', retryable: true })
    expect(printed(error)).not.toContain(KEY)
    expect(JSON.stringify(error?.cause)).not.toContain(KEY)
    expect(server().requests).toHaveLength(0)
  })

  test('an Error whose cause is an object quoting the key: the cause is copied without it', async () => {
    const thrown = new TypeError('fetch failed', { cause: { request: { headers: { 'x-api-key': KEY } } } })
    const fetch = (() => Promise.reject(thrown)) as unknown as typeof globalThis.fetch
    const client = testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5', apiKey: KEY, fetch })
    const error = await caught(client.complete(ask()))
    expect(error?.cause).toMatchObject({ name: 'TypeError', message: 'fetch failed' })
    expect(printed(error)).not.toContain(KEY)
  })

  test.each([
    [
      'a message getter that throws',
      {
        get message(): string {
          throw new Error('unreadable')
        },
      },
    ],
    [
      'a property getter that throws',
      Object.defineProperty({}, 'request', {
        enumerable: true,
        get() {
          throw new Error('unreadable')
        },
      }),
    ],
  ])('an object with %s: still a network error, retried, without the key', async (_name, thrown) => {
    const fetch = (() => Promise.reject(thrown)) as unknown as typeof globalThis.fetch
    const client = testClient(server(), {
      api: 'openai-chat',
      model: 'gpt-4.1',
      apiKey: KEY,
      fetch,
      retry: { maxAttempts: 2, baseDelayMs: 1 },
    })
    const retries: number[] = []
    const error = await caught(client.complete(ask(), { onRetry: ({ attempt }) => retries.push(attempt) }))
    expect(error).toMatchObject({ code: 'network', retryable: true, partial: { stopReason: 'error' } })
    expect(retries).toEqual([1])
  })

  test('an object that does not quote the key is kept as the cause as it is', () => {
    const thrown = { code: 'E_PROXY', message: 'the proxy is down' }
    expect(errorFromThrown(thrown, ctx).cause).toBe(thrown)
  })
})

describe('text cut to a length is redacted before the cut', () => {
  test('an HTTP error body longer than 64 KiB with the key across the cut', async () => {
    const body = keyAcross(64 * 1024, '', ' and more')
    const error = await errorFromResponse(new Response(body, { status: 500 }), ctx)
    expect(printed(error)).not.toContain(PREFIX)
    expect(error.providerMessage).toMatch(/^x+\[redacted/)
  })

  test('an event that is not JSON, quoted in the error, with the key across the quote limit', () => {
    const data = keyAcross(120, '{"oops ')
    let error: unknown
    try {
      parseEventJson(data, ctx)
    } catch (thrown) {
      error = thrown
    }
    expect(ProviderError.is(error)).toBe(true)
    expect(printed(error)).not.toContain(PREFIX)
  })
})

describe('through a client', () => {
  const server = useServer()
  const client = (config: Partial<ClientConfig> = {}) =>
    testClient(server(), { api: 'openai-chat', model: 'gpt-4.1', apiKey: KEY, ...config })

  for (const [api, key] of [
    ['openai-chat', `${KEY}\n`.replace('secret', 'sec\nret')],
    ['anthropic', ` sk-ant-${KEY}\u0000 `],
    ['google', `AIza-${KEY}\r`.replace('abc', 'a\rbc')],
    // Control characters fetch's Headers let through, and the HTTP layer refuses as it sends.
    ['openai-responses', `${KEY}\u0001`],
    ['anthropic', `sk-ant-${KEY}\u007f`.replace('secret', 'sec\u001bret')],
  ] as const) {
    test(`${api}: a key HTTP cannot carry fails as invalid_request, unsent, and the key is never printed`, async () => {
      const error = await caught(client({ api, apiKey: key }).complete(ask()))
      expect(error).toMatchObject({ code: 'invalid_request', retryable: false })
      expect(error?.message).toContain('check the API key')
      expect(server().requests).toHaveLength(0)
      for (const piece of key.trim().split(/[\s\p{Cc}]/u)) {
        if (piece.length >= 8) expect(printed(error)).not.toContain(piece.slice(0, 8))
      }
    })
  }

  test('an event the adapter cannot read is quoted without the key, even across the quote limit', async () => {
    const data = keyAcross(120, '{"choices":[{"delta":{"tool_calls":[null]}}],"pad":"', '"}')
    server().enqueue({ body: `data: ${data}\n\n` })
    const error = await caught(client({ retry: { maxAttempts: 1 } }).complete(ask()))
    expect(error).toMatchObject({ code: 'invalid_response' })
    expect(printed(error)).not.toContain(PREFIX)
  })

  test('a 200 that is not an event stream is quoted without the key, even across the quote limit', async () => {
    const body = keyAcross(200, '{"detail":"', '"}')
    server().enqueue({ headers: { 'content-type': 'application/json' }, body })
    const error = await caught(client().complete(ask()))
    expect(error).toMatchObject({ code: 'invalid_response' })
    expect(printed(error)).not.toContain(PREFIX)
  })
})

describe('a server that echoes a base64-like key encoded', () => {
  const server = useServer()
  const key = 'sk-AbC+dEf/GhI=jKl~0123 ==='
  const client = () =>
    testClient(server(), { api: 'openai-chat', model: 'gpt-4.1', apiKey: key, retry: { maxAttempts: 1 } })

  test('form-encoded in a 400 body: not in the error', async () => {
    const echoed = new URLSearchParams({ q: key })
      .toString()
      .slice(2)
      .replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())
    server().enqueue({
      status: 400,
      headers: { 'content-type': 'text/plain' },
      body: `bad request q=${echoed}`,
    })
    const error = await caught(client().complete(ask()))
    expect(error?.status).toBe(400)
    expect(error?.providerMessage).toBe('bad request q=[redacted]')
    expect(printed(error)).not.toContain(echoed)
  })

  test('JSON-escaped (\\/) in a 200 JSON body quoted as not a stream: not in the error', async () => {
    const echoed = key.replaceAll('/', '\\/')
    server().enqueue({ headers: { 'content-type': 'application/json' }, body: `{"detail":"${echoed}"}` })
    const error = await caught(client().complete(ask()))
    expect(error).toMatchObject({ code: 'invalid_response' })
    expect(error?.message).toContain('{"detail":"[redacted]"}')
  })
})
