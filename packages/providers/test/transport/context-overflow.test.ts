import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isContextOverflow, ProviderError } from '@kode/providers'
import { frameFor, readChunksFile } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { testClient, useServer } from '../helpers.js'

const dir = join(import.meta.dirname, '../fixtures/errors/context-overflow')
const models: Record<string, string> = {
  'openai-chat': 'gpt-4o',
  'openai-responses': 'gpt-5',
  anthropic: 'claude-sonnet-4-5',
  google: 'gemini-2.5-pro',
  openrouter: 'openai/gpt-4o',
}
const bodies = readdirSync(dir).flatMap((file) => {
  const match = /^(.+)\.(\d{3})\.json$/.exec(file)
  return match
    ? [{ api: match[1]!, status: Number(match[2]), body: readFileSync(join(dir, file), 'utf8') }]
    : []
})

async function failureOf(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!ProviderError.is(error)) throw new Error(`expected a ProviderError, got ${String(error)}`)
  return error
}

describe('a request larger than the context window is a context_overflow error', () => {
  const server = useServer()

  test('every built-in api has a recorded body', () => {
    expect(bodies.map((b) => b.api).sort()).toEqual(Object.keys(models).sort())
  })

  test.each(bodies)('$api answering $status with its own body', async ({ api, status, body }) => {
    server().enqueue({ status, body })
    const client = testClient(server(), { api, model: models[api]!, retry: { maxAttempts: 1 } })
    const error = await failureOf(client.complete({ messages: [] }))
    expect(error).toMatchObject({ kind: 'context_overflow', status, retryable: false })
    expect(server().requests).toHaveLength(1)
  })

  test('openai-responses failing the response in the stream', async () => {
    const payloads = readChunksFile(join(dir, 'openai-responses.stream.chunks.txt'))
    server().enqueue({ body: frameFor('openai-responses', payloads) })
    const client = testClient(server(), { api: 'openai-responses', model: 'gpt-5' })
    const error = await failureOf(client.complete({ messages: [] }))
    expect(error).toMatchObject({
      kind: 'context_overflow',
      code: 'context_length_exceeded',
      retryable: false,
    })
  })
})

describe('what is not an overflow', () => {
  test('a rate limit counted in tokens (429) is not', () => {
    const message = 'Request too large for gpt-4o: Limit 30000, Requested 50000 tokens per min (TPM).'
    expect(isContextOverflow(429, { message, code: 'rate_limit_exceeded' })).toBe(false)
  })

  test('another invalid request is not', () => {
    expect(
      isContextOverflow(400, { message: "Invalid value for 'temperature'", code: 'invalid_value' }),
    ).toBe(false)
  })

  test('an error without a body is not', () => {
    expect(isContextOverflow(500, {})).toBe(false)
  })
})
