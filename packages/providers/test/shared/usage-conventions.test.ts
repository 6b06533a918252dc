import { decodeHistoryEvent, encodeHistoryEvent } from '@kode/protocol'
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

describe('a count beyond the largest safe integer is no count (a provider bug, never a real one)', () => {
  const huge = '1e308'

  test('anthropic: the message keeps the sane counts, prices them, and can be persisted', async () => {
    server().enqueue(
      streamOf('anthropic', [
        `{"type":"message_start","message":{"id":"m","usage":{"input_tokens":${huge},"cache_read_input_tokens":${huge},"output_tokens":1}}}`,
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}',
        '{"type":"content_block_stop","index":0}',
        '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}',
        '{"type":"message_stop"}',
      ]),
    )
    const message = await testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' }).complete(
      ask(),
    )
    expect(message.usage).toStrictEqual({ outputTokens: 7 })
    expect(message.costUsd).toBe((7 * 15) / 1e6)
    expect(decodeHistoryEvent(encodeHistoryEvent(message))).toEqual(message)
  })

  test('openai-chat and google: the same (the chat message was priced Infinity, and persisting it threw)', async () => {
    server().enqueue(
      streamOf('openai-chat', [
        '{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}',
        '{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        `{"id":"c","choices":[],"usage":{"prompt_tokens":${huge},"completion_tokens":3,"total_tokens":${huge}}}`,
      ]),
    )
    const chat = await testClient(server(), { api: 'openai-chat', model: 'gpt-4o' }).complete(ask())
    expect(chat.usage).toStrictEqual({ outputTokens: 3 })
    expect(decodeHistoryEvent(encodeHistoryEvent(chat))).toEqual(chat)

    server().enqueue(
      streamOf('google', [
        JSON.stringify({
          candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 1e308, candidatesTokenCount: 3, thoughtsTokenCount: 1e308 },
        }),
      ]),
    )
    const gemini = await testClient(server(), { api: 'google', model: 'gemini-3-pro-preview' }).complete(
      ask(),
    )
    expect(gemini.usage).toStrictEqual({ outputTokens: 3 })
    expect(decodeHistoryEvent(encodeHistoryEvent(gemini))).toEqual(gemini)
  })
})
