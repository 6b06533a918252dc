import { createServer } from 'node:net'
import { inspect } from 'node:util'
import { ProviderError } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, testClient, useServer } from '../helpers.js'

const server = useServer()

/** A URL on 127.0.0.1 where nothing listens: the connection is refused, so `fetch` throws. */
async function refusedUrl(): Promise<string> {
  const listener = createServer()
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  const { port } = listener.address() as { port: number }
  await new Promise((resolve) => listener.close(resolve))
  return `http://127.0.0.1:${port}/v1`
}
const KEY = 'sk-live-cause-secret-0123456789'

/** A host's fetch wrapper that, as HTTP libraries do, keeps the failed request on its error. */
const keepingRequest: typeof fetch = async (input, init) => {
  try {
    return await fetch(input, init)
  } catch (error) {
    throw Object.assign(new Error('request failed', { cause: error }), {
      request: { url: String(input), headers: init?.headers },
    })
  }
}

describe("a thrown error's own properties never carry the key into the ProviderError", () => {
  test('a request kept on the error a host fetch threw is not in the cause', async () => {
    const client = testClient(server(), {
      baseUrl: await refusedUrl(),
      api: 'openai-chat',
      model: 'gpt-4o',
      apiKey: KEY,
      fetch: keepingRequest,
      retry: { maxAttempts: 1 },
    })
    const error = await client.complete(ask()).catch((e: unknown) => e)
    expect(ProviderError.is(error)).toBe(true)
    expect((error as ProviderError).code).toBe('network')
    expect(inspect(error, { depth: 20 })).not.toContain(KEY)
    expect(JSON.stringify((error as Error).cause)).not.toContain(KEY)
    // What the error said is kept.
    expect((error as Error).cause).toMatchObject({ name: 'Error', message: 'request failed' })
  })

  test('headers kept as a Headers object are not in the cause either', async () => {
    const client = testClient(server(), {
      baseUrl: await refusedUrl(),
      api: 'anthropic',
      model: 'claude-sonnet-4-5',
      apiKey: KEY,
      fetch: async (input, init) => {
        try {
          return await fetch(input, init)
        } catch (error) {
          throw Object.assign(new TypeError('fetch failed', { cause: error }), {
            headers: new Headers(init?.headers),
          })
        }
      },
      retry: { maxAttempts: 1 },
    })
    const error = await client.complete(ask()).catch((e: unknown) => e)
    expect((error as ProviderError).code).toBe('network')
    expect(inspect(error, { depth: 20 })).not.toContain(KEY)
  })
})
