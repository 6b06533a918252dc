import { inspect } from 'node:util'
import { ProviderError } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, testClient, useServer } from '../helpers.js'

const server = useServer()
const AZURE_KEY = 'azure-0123456789abcdef0123456789abcdef'
const GATEWAY_TOKEN = 'gw-tok-98765432109876543210'

/** Every way a host may print or store an error. */
const renderings = (error: unknown) => [
  String(error),
  JSON.stringify(error),
  inspect(error, { depth: 20 }),
  (error as ProviderError).providerMessage ?? '',
]

describe('credentials the host sends in headers are redacted like the API key', () => {
  test("Azure's api-key header, echoed in a 401 body, is not in the error", async () => {
    server().enqueue({
      status: 401,
      body: JSON.stringify({
        error: { message: `Access denied: key ${AZURE_KEY} is not valid`, code: '401' },
      }),
    })
    const client = testClient(server(), {
      api: 'openai-chat',
      model: 'gpt-4o',
      apiKey: undefined,
      headers: { 'api-key': AZURE_KEY },
      retry: { maxAttempts: 1 },
    })
    const error = await client.complete(ask()).catch((e: unknown) => e)
    expect(ProviderError.is(error)).toBe(true)
    expect((error as ProviderError).providerMessage).toBe('Access denied: key [redacted] is not valid')
    for (const text of renderings(error)) expect(text).not.toContain(AZURE_KEY)
  })

  test("a gateway's bearer token, echoed without its scheme in a stream error, is not in the error", async () => {
    server().enqueue({
      body: `data: ${JSON.stringify({ error: { message: `token ${GATEWAY_TOKEN} expired`, type: 'auth' } })}\n\n`,
    })
    const client = testClient(server(), {
      api: 'openai-chat',
      model: 'gpt-4o',
      headers: { 'cf-aig-authorization': `Bearer ${GATEWAY_TOKEN}` },
      retry: { maxAttempts: 1 },
    })
    const error = await client.complete(ask()).catch((e: unknown) => e)
    expect(ProviderError.is(error)).toBe(true)
    for (const text of renderings(error)) expect(text).not.toContain(GATEWAY_TOKEN)
  })

  test('a header that carries no credential is quoted as it is', async () => {
    server().enqueue({
      status: 400,
      body: JSON.stringify({ error: { message: 'unknown beta tools-2024-05-16' } }),
    })
    const client = testClient(server(), {
      api: 'anthropic',
      model: 'claude-sonnet-4-5',
      headers: { 'anthropic-beta': 'tools-2024-05-16' },
      retry: { maxAttempts: 1 },
    })
    const error = (await client.complete(ask()).catch((e: unknown) => e)) as ProviderError
    expect(error.providerMessage).toBe('unknown beta tools-2024-05-16')
  })
})
