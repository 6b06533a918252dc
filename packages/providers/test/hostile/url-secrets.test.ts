import { inspect } from 'node:util'
import { ProviderError, type RetryInfo } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { redact } from '../../src/transport/errors.js'
import { ask, testClient, useServer } from '../helpers.js'

const server = useServer()
const PASSWORD = 'hunter2-basic-secret'
const QUERY_KEY = 'AIzaSyD-query-secret-42'

/** Every way a host may print or store an error. */
const renderings = (error: unknown) => [
  String(error),
  JSON.stringify(error),
  inspect(error, { depth: 20 }),
  (error as Error).message,
  String((error as Error).cause),
]

describe('URL credentials and key-bearing query parameters never appear in errors', () => {
  test('a user:pass@ in baseUrl: refused at createClient, and not in the message, cause, String() or JSON.stringify', () => {
    let error: unknown
    try {
      testClient(server(), {
        api: 'openai-chat',
        model: 'gpt-4o',
        baseUrl: server().url.replace('http://', `http://user:${PASSWORD}@`),
      })
    } catch (thrown) {
      error = thrown
    }
    expect(ProviderError.is(error) && error.code).toBe('invalid_config')
    for (const text of renderings(error)) expect(text).not.toContain(PASSWORD)
    expect((error as Error).message).toContain('[redacted]@')
  })

  test("a user:pass@ in baseUrl with the host's own fetch: not in the message, cause, String(), JSON.stringify or a retry notice", async () => {
    const retries: RetryInfo[] = []
    const client = testClient(server(), {
      api: 'openai-chat',
      model: 'gpt-4o',
      baseUrl: server().url.replace('http://', `http://user:${PASSWORD}@`),
      // A fetch of the host's own decides which roots it takes: this one (the platform's) refuses it.
      fetch: (input, init) => fetch(input, init),
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    })
    const error = await client
      .complete(ask(), { onRetry: (info) => retries.push(info) })
      .catch((e: unknown) => e)
    expect(ProviderError.is(error)).toBe(true)
    for (const text of [...renderings(error), ...retries.flatMap((r) => renderings(r.error))])
      expect(text).not.toContain(PASSWORD)
    expect((error as Error).message).toContain('[redacted]@')
  })

  test('an error body of one long run of scheme characters is redacted in one pass, not once per start', async () => {
    // Every `a.` could begin a URL scheme; matching from each to the end of the run was quadratic,
    // which held the client for seconds on a 64 kB body.
    const run = `${'a.'.repeat(32_000)}://x`
    server().enqueue({ status: 400, body: `https://user:${PASSWORD}@x.example/ ${run}` })
    const client = testClient(server(), { api: 'openai-chat', model: 'gpt-4o', retry: { maxAttempts: 1 } })
    const error = await client.complete(ask()).catch((e: unknown) => e)
    expect(ProviderError.is(error) && error.status).toBe(400)
    for (const text of renderings(error)) expect(text).not.toContain(PASSWORD)
    expect((error as Error).message).toContain('https://[redacted]@x.example/ a.a.')
  })

  test('a key in a URL the provider quotes in its error body is redacted', async () => {
    server().enqueue({
      status: 400,
      body: JSON.stringify({
        error: { message: `bad request to https://x.example/v1/models?key=${QUERY_KEY}&alt=sse`, code: 400 },
      }),
    })
    const client = testClient(server(), {
      api: 'google',
      model: 'gemini-2.5-flash',
      retry: { maxAttempts: 1 },
    })
    const error = (await client.complete(ask()).catch((e: unknown) => e)) as ProviderError
    expect(error.providerMessage).toBe('bad request to https://x.example/v1/models?key=[redacted]&alt=sse')
    for (const text of renderings(error)) expect(text).not.toContain(QUERY_KEY)
  })

  test.each([
    ['https://u:p4ss@h.example/v1', 'https://[redacted]@h.example/v1'],
    ['GET /v1?api_key=abc123&x=1', 'GET /v1?api_key=[redacted]&x=1'],
    [
      '?apikey=abc&access_token=t0k&subscription-key=s&sig=zz&X-Amz-Signature=f',
      '?apikey=[redacted]&access_token=[redacted]&subscription-key=[redacted]&sig=[redacted]&X-Amz-Signature=[redacted]',
    ],
    ['?monkey=1&keyboard=2&alt=sse', '?monkey=1&keyboard=2&alt=sse'],
  ])('redact(%j)', (text, expected) => {
    expect(redact(text, undefined)).toBe(expected)
  })
})
