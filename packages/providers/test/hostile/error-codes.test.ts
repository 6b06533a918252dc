import { inspect } from 'node:util'
import { ProviderError, registerProvider } from '@kode/providers'
import { errorFromPayload, parseEventJson } from '@kode/providers/adapter'
import { sseFrame } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, testClient, useServer } from '../helpers.js'

// A server (or a proxy in front of it) may quote the key it refused in any field of its error
// body, the code and type included. The code goes into the error's message and `code`: it is
// redacted like the message.

const server = useServer()
const KEY = 'sk-echoed-in-code-0123456789'

const renderings = (error: unknown) => [
  String(error),
  JSON.stringify(error),
  inspect(error, { depth: 20 }),
  (error as ProviderError).code ?? '',
]

registerProvider('error-events', (config) => ({
  defaultBaseUrl: 'http://unused',
  buildRequest: () => ({ path: '/e', headers: {}, body: {} }),
  createEventMapper: () => (event) => {
    throw errorFromPayload(parseEventJson(event.data, config.errors), config.errors)
  },
}))

async function failure(api: string) {
  const client = testClient(server(), { api, model: 'm', apiKey: KEY, retry: { maxAttempts: 1 } })
  const error = await client.complete(ask()).catch((e: unknown) => e)
  expect(ProviderError.is(error)).toBe(true)
  return error as ProviderError
}

describe('an error code that quotes the API key', () => {
  test('in an HTTP error body, is redacted in the message and the code', async () => {
    server().enqueue({
      status: 401,
      body: JSON.stringify({ error: { message: 'Access denied', type: `invalid_key:${KEY}` } }),
    })
    const error = await failure('openai-chat')
    expect(error.code).toBe('invalid_key:[redacted]')
    for (const text of renderings(error)) expect(text).not.toContain(KEY)
  })

  test('in an error event inside the stream, is redacted in the message and the code', async () => {
    server().enqueue({
      body: [sseFrame(JSON.stringify({ error: { code: `key ${KEY} revoked`, message: 'no' } }))],
    })
    const error = await failure('error-events')
    expect(error.code).toBe('key [redacted] revoked')
    for (const text of renderings(error)) expect(text).not.toContain(KEY)
  })
})
