import { type ClientConfig, createClient, ProviderError, registerProvider } from '@kode/providers'
import type { ProviderFactory } from '@kode/providers/adapter'
import type { FramedApi } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, streamOf, testClient, useServer } from './helpers.js'

const server = useServer()
const END: Record<'openai-chat' | 'anthropic' | 'openai-responses', string[]> = {
  'openai-chat': ['{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'],
  anthropic: [
    '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":1}}}',
    '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}',
    '{"type":"message_stop"}',
  ],
  'openai-responses': [
    '{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}',
  ],
}

/** The body of one request through `api` with `config`. */
async function bodyOf(api: keyof typeof END, config: Partial<ClientConfig>) {
  server().enqueue(streamOf(api as FramedApi, END[api]))
  await testClient(server(), { api, model: 'm', ...config }).complete({ ...ask(), maxOutputTokens: 5 })
  return server().requests.at(-1)!.body as Record<string, unknown>
}

describe('per-api options, keyed by api', () => {
  test("openai-chat reads apiOptions['openai-chat']", async () => {
    const body = await bodyOf('openai-chat', {
      apiOptions: { 'openai-chat': { includeUsage: false, maxTokensField: 'max_tokens' } },
    })
    expect(body).not.toHaveProperty('stream_options')
    expect(body).toMatchObject({ max_tokens: 5 })
  })

  test('anthropic reads apiOptions.anthropic', async () => {
    const body = await bodyOf('anthropic', { apiOptions: { anthropic: { cacheControl: false } } })
    expect(JSON.stringify(body)).not.toContain('cache_control')
  })

  test("openai-responses reads apiOptions['openai-responses']", async () => {
    const body = await bodyOf('openai-responses', {
      apiOptions: { 'openai-responses': { store: true, include: [] } },
    })
    expect(body).toMatchObject({ store: true })
    expect(body).not.toHaveProperty('include')
  })

  test("an adapter ignores the options of other apis, so one config can carry every api's", async () => {
    const apiOptions = {
      anthropic: { cacheControl: false },
      'openai-responses': { store: true },
      openrouter: { includeUsage: false },
    } as const
    const body = await bodyOf('openai-chat', { apiOptions })
    expect(body).toMatchObject({ stream_options: { include_usage: true }, max_completion_tokens: 5 })
  })

  test('the keyed option wins over the deprecated flat field', async () => {
    const body = await bodyOf('openai-chat', {
      includeUsage: false,
      apiOptions: { 'openai-chat': { includeUsage: true } },
    })
    expect(body).toMatchObject({ stream_options: { include_usage: true } })
  })
})

test('a client refuses an adapter stating a spec version it does not implement', () => {
  const future: ProviderFactory = () => ({
    specVersion: 99,
    defaultBaseUrl: 'http://127.0.0.1:1',
    buildRequest: () => ({ path: '/', headers: {}, body: {} }),
    createEventMapper: () => () => {},
  })
  registerProvider('future-spec', future)
  expect(() => createClient({ api: 'future-spec', model: 'm' })).toThrow(ProviderError)
  expect(() => createClient({ api: 'future-spec', model: 'm' })).toThrow(/spec version 99/)
})
