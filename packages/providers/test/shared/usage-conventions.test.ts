import { describe, expect, test } from 'vitest'
import { ask, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()

describe('completion counts that leave reasoning out are made inclusive, read from the totals', () => {
  test('chat, reasoning excluded (xAI: total = prompt + completion + reasoning)', async () => {
    server().enqueue(streamOf('openai-chat', fixture('openai-chat', 'kode-xai-reasoning-usage')))
    const message = await testClient(server(), { api: 'openai-chat', model: 'grok-3-mini' }).complete(ask())
    expect(message.usage).toEqual({
      inputTokens: 14,
      outputTokens: 289,
      reasoningTokens: 288,
      cacheReadTokens: 6,
      totalTokens: 303,
    })
  })

  test('chat, reasoning included (DeepSeek: total = prompt + completion) is kept as it is', async () => {
    server().enqueue(streamOf('openai-chat', fixture('openai-chat', 'deepseek-reasoning')))
    const message = await testClient(server(), { api: 'openai-chat', model: 'deepseek-reasoner' }).complete(
      ask(),
    )
    expect(message.usage).toEqual({
      inputTokens: 18,
      outputTokens: 219,
      reasoningTokens: 205,
      cacheReadTokens: 0,
      totalTokens: 237,
    })
  })

  test('responses, reasoning excluded', async () => {
    server().enqueue(streamOf('openai-responses', fixture('openai-responses', 'kode-xai-reasoning-usage')))
    const message = await testClient(server(), { api: 'openai-responses', model: 'grok-4' }).complete(ask())
    expect(message.usage).toEqual({
      inputTokens: 14,
      outputTokens: 289,
      reasoningTokens: 288,
      cacheReadTokens: 6,
      totalTokens: 303,
    })
  })

  test('responses, reasoning included (GitHub Copilot recording) is kept as it is', async () => {
    server().enqueue(
      streamOf('openai-responses', fixture('openai-responses', 'github-copilot-id-rotation.1')),
    )
    const message = await testClient(server(), { api: 'openai-responses', model: 'gpt-5' }).complete(ask())
    expect(message.usage).toMatchObject({
      inputTokens: 19,
      outputTokens: 105,
      reasoningTokens: 44,
      totalTokens: 124,
    })
  })
})
