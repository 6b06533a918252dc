import { createServer } from 'node:net'
import { inspect } from 'node:util'
import { ProviderError } from '@kode/providers'
import { redactCause } from '@kode/providers/adapter'
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

/** A connect error as a happy-eyeballs dialer keeps it: the attempted request on each attempt. */
function attemptError(address: string, headers: HeadersInit | undefined): Error {
  return Object.assign(new Error(`connect ECONNREFUSED ${address}`), {
    code: 'ECONNREFUSED',
    request: { headers },
  })
}

describe("an AggregateError's errors never carry the key into the ProviderError", () => {
  test('a key on one of the aggregated connect errors is not in the cause', async () => {
    const client = testClient(server(), {
      baseUrl: await refusedUrl(),
      api: 'openai-chat',
      model: 'gpt-4o',
      apiKey: KEY,
      fetch: async (input, init) => {
        try {
          return await fetch(input, init)
        } catch {
          throw new TypeError('fetch failed', {
            cause: new AggregateError(
              [attemptError('127.0.0.1', init?.headers), attemptError('::1', init?.headers)],
              'all connection attempts failed',
            ),
          })
        }
      },
      retry: { maxAttempts: 1 },
    })
    const error = await client.complete(ask()).catch((e: unknown) => e)
    expect((error as ProviderError).code).toBe('network')
    expect(inspect(error, { depth: 20 })).not.toContain(KEY)
    // What the aggregate said is kept: its name, message and each attempt's message and code.
    const aggregate = ((error as Error).cause as Error).cause as Error & { errors: unknown[] }
    expect(aggregate).toMatchObject({ name: 'AggregateError', message: 'all connection attempts failed' })
    expect(aggregate.errors).toEqual([
      expect.objectContaining({ message: 'connect ECONNREFUSED 127.0.0.1', code: 'ECONNREFUSED' }),
      expect.objectContaining({ message: 'connect ECONNREFUSED ::1', code: 'ECONNREFUSED' }),
    ])
  })

  test('a key in the message of an aggregated error is redacted', () => {
    const thrown = new AggregateError([new Error('ok'), new Error(`bad key ${KEY}`)], 'two failed')
    const safe = redactCause(thrown, KEY) as AggregateError
    expect(inspect(safe, { depth: 20 })).not.toContain(KEY)
    expect(safe.errors.map((e: Error) => e.message)).toEqual(['ok', 'bad key [redacted]'])
  })

  test('an aggregate that contains itself is walked a bounded number of times', () => {
    const thrown = new AggregateError([], 'all failed')
    thrown.errors.push(thrown, new Error(`bad key ${KEY}`), thrown)
    const safe = redactCause(thrown, KEY)
    expect(inspect(safe, { depth: 50 })).not.toContain(KEY)
  })

  test('a wide and deep tree of aggregates is cut, not walked in full', () => {
    // 2^40 paths if walked naively; every leaf quotes the key.
    let level: Error = new Error(`leaf ${KEY}`)
    for (let i = 0; i < 40; i++) level = new AggregateError([level, level], `level ${i}`)
    const started = performance.now()
    const safe = redactCause(level, KEY)
    expect(performance.now() - started).toBeLessThan(1000)
    expect(errorTexts(safe).includes(KEY)).toBe(false)
  })
})

/** Every message, stack, code and aggregated error reachable from `value`, each error once. */
function errorTexts(value: unknown, seen = new Set<unknown>()): string {
  if (!(value instanceof Error) || seen.has(value)) return typeof value === 'string' ? value : ''
  seen.add(value)
  const { errors } = value as { errors?: unknown }
  const children = [value.cause, ...(Array.isArray(errors) ? errors : [])]
  const own = `${value.message}\n${value.stack}\n${String((value as { code?: unknown }).code)}`
  return [own, ...children.map((child) => errorTexts(child, seen))].join('\n')
}
