import type { AssistantMessage } from '@kode/protocol'
import { ProviderError } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { googleUsage } from '../../src/apis/google/events.js'
import { ask, collect, streamOf, testClient, useServer } from '../helpers.js'

describe('googleUsage', () => {
  test('metadata without counts (early Gemini chunks) is no usage, not an empty one', () => {
    const metadata = JSON.parse('{"trafficType":"ON_DEMAND"}')
    expect(googleUsage({})).toBeUndefined()
    expect(googleUsage(metadata)).toBeUndefined()
  })

  test('a tool-use prompt count alone is input', () => {
    expect(googleUsage({ toolUsePromptTokenCount: 5 })).toStrictEqual({ inputTokens: 5 })
  })

  test('any count makes a usage with only what was counted', () => {
    expect(googleUsage({ cachedContentTokenCount: 3 })).toStrictEqual({ cacheReadTokens: 3 })
    expect(googleUsage({ promptTokenCount: 9, thoughtsTokenCount: 4 })).toStrictEqual({
      inputTokens: 9,
      outputTokens: 4,
      reasoningTokens: 4,
    })
  })
})

describe('the usage a Gemini stream reports, as the message keeps it', () => {
  const server = useServer()
  const chunk = (text: string, usageMetadata: object, finishReason?: string) =>
    JSON.stringify({
      candidates: [
        { content: { role: 'model', parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) },
      ],
      usageMetadata,
    })

  test('the last counts win; metadata without counts later keeps them', async () => {
    server().enqueue(
      streamOf('google', [
        chunk('a', { promptTokenCount: 9, candidatesTokenCount: 1 }),
        chunk('b', { promptTokenCount: 9, candidatesTokenCount: 2 }),
        chunk('c', { trafficType: 'ON_DEMAND' }, 'STOP'),
      ]),
    )
    const message = await testClient(server(), { api: 'google', model: 'gemini-3-pro-preview' }).complete(
      ask(),
    )
    expect(message.usage).toEqual({ inputTokens: 9, outputTokens: 2, totalTokens: 11 })
  })

  test('tokens of tool-use prompts (Google Search, URL context) count as input, as Gemini bills them', async () => {
    // Recorded shape of a url_context call: the fetched page is counted apart from the prompt, and
    // the total is prompt + tool-use prompt + candidates + thoughts.
    server().enqueue(
      streamOf('google', [
        chunk(
          'Done.',
          {
            promptTokenCount: 26,
            candidatesTokenCount: 90,
            toolUsePromptTokenCount: 12504,
            thoughtsTokenCount: 13,
            cachedContentTokenCount: 20,
            totalTokenCount: 12633,
          },
          'STOP',
        ),
      ]),
    )
    const message = await testClient(server(), { api: 'google', model: 'gemini-2.5-flash' }).complete(ask())
    expect(message.usage).toEqual({
      inputTokens: 26 + 12504,
      outputTokens: 90 + 13,
      cacheReadTokens: 20,
      reasoningTokens: 13,
      totalTokens: 12633,
    })
  })

  test('a stream cut before its end keeps the counts of the last chunk that had any', async () => {
    server().enqueue(
      streamOf('google', [
        chunk('a', { promptTokenCount: 9, candidatesTokenCount: 1 }),
        chunk('b', { promptTokenCount: 9, candidatesTokenCount: 3 }),
        chunk('c', { promptTokenCount: 'nine' }),
      ]),
    )
    const client = testClient(server(), { api: 'google', model: 'gemini-3-pro-preview' })
    const failure = await collect(client.stream(ask())).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(failure).toBeInstanceOf(ProviderError)
    expect((failure as ProviderError).partial?.usage).toEqual({
      inputTokens: 9,
      outputTokens: 3,
      totalTokens: 12,
    })
  })

  test('an aborted stream keeps the counts so far', async () => {
    server().enqueue(
      streamOf('google', [
        chunk('a', { promptTokenCount: 9, candidatesTokenCount: 1 }),
        chunk('b', { promptTokenCount: 9, candidatesTokenCount: 2 }, 'STOP'),
      ]),
    )
    const controller = new AbortController()
    const client = testClient(server(), { api: 'google', model: 'gemini-3-pro-preview' })
    let done: AssistantMessage | undefined
    for await (const item of client.stream(ask(), { signal: controller.signal })) {
      if (item.type === 'text_delta') controller.abort()
      if (item.type === 'done') done = item.message
    }
    expect(done?.stopReason).toBe('aborted')
    expect(done?.usage).toEqual({ inputTokens: 9, outputTokens: 1, totalTokens: 10 })
  })
})
