import type { ProviderError, RetryInfo } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const gemini = (retry = {}) =>
  testClient(server(), {
    api: 'google',
    model: 'gemini-2.5-flash',
    retry: { baseDelayMs: 1, maxDelayMs: 5, ...retry },
  })
const done = JSON.stringify({
  candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, finishReason: 'STOP' }],
})
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e as ProviderError,
  )

describe('Gemini error bodies', () => {
  // Gemini says how long to wait in the body, not in a header: "Please retry in 58.9s", with
  // a google.rpc.RetryInfo detail (a Duration: seconds with an `s`).
  test("a 429's RetryInfo retryDelay is the delay the retry waits", async () => {
    const body = {
      error: {
        code: 429,
        message: 'You exceeded your current quota. Please retry in 58.934310785s.',
        status: 'RESOURCE_EXHAUSTED',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '58s' },
        ],
      },
    }
    server().enqueue({ status: 429, body: JSON.stringify(body) }, streamOf('google', [done]))
    const retries: RetryInfo[] = []
    const message = await gemini({ maxRetryAfterMs: 30 }).complete(ask(), {
      onRetry: (info) => retries.push(info),
    })
    expect(message.stopReason).toBe('stop')
    expect(retries).toHaveLength(1)
    expect(retries[0]!.error).toMatchObject({ status: 429, code: 'RESOURCE_EXHAUSTED', retryAfterMs: 58_000 })
    // Capped by maxRetryAfterMs, as a Retry-After header is.
    expect(retries[0]!.delayMs).toBe(30)
  })

  test('a fractional retryDelay is read in milliseconds', async () => {
    const body = {
      error: {
        code: 503,
        message: 'The model is overloaded.',
        status: 'UNAVAILABLE',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.025s' }],
      },
    }
    server().enqueue({ status: 503, body: JSON.stringify(body) }, streamOf('google', [done]))
    const retries: RetryInfo[] = []
    await gemini().complete(ask(), { onRetry: (info) => retries.push(info) })
    expect(retries.map((r) => r.delayMs)).toEqual([25])
  })

  test('a header wins over the body', async () => {
    const body = {
      error: {
        code: 429,
        message: 'slow down',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '58s' }],
      },
    }
    server().enqueue(
      { status: 429, headers: { 'retry-after-ms': '7' }, body: JSON.stringify(body) },
      streamOf('google', [done]),
    )
    const retries: RetryInfo[] = []
    await gemini().complete(ask(), { onRetry: (info) => retries.push(info) })
    expect(retries.map((r) => r.delayMs)).toEqual([7])
  })

  // Vertex AI's streamGenerateContent answers an error with the error object inside a list.
  test('an error inside a JSON list is read as the error it holds', async () => {
    const body = [
      {
        error: {
          code: 400,
          message: 'The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).',
          status: 'INVALID_ARGUMENT',
        },
      },
    ]
    server().enqueue({ status: 400, body: JSON.stringify(body, null, 2) })
    const error = await caught(gemini().complete(ask()))
    expect(error).toMatchObject({
      status: 400,
      code: 'INVALID_ARGUMENT',
      kind: 'context_overflow',
      retryable: false,
      providerMessage:
        'The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).',
    })
    expect(error!.message).toBe(
      'google responded 400 INVALID_ARGUMENT: The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).',
    )
  })
})
