import type { Message } from '@kode/protocol'
import type { ClientConfig, LLMRequest, ProviderError } from '@kode/providers'
import { frameChat, sseComment } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, collect, fixture, streamOf, testClient, useServer } from '../helpers.js'
import { assistant, user } from '../messages.js'

const server = useServer()
const MODEL = 'anthropic/claude-sonnet-4.5'
const router = (config: Partial<ClientConfig> = {}) =>
  testClient(server(), { api: 'openrouter', model: MODEL, ...config })

describe('openrouter stream', () => {
  test('processing comments are ignored; reasoning_details become one openrouter signature part', async () => {
    const payloads = fixture('openrouter', 'kode-reasoning-details')
    server().enqueue({
      body: [
        sseComment('OPENROUTER PROCESSING'),
        sseComment('OPENROUTER PROCESSING'),
        ...frameChat(payloads),
      ],
    })
    const items = await collect(router().stream(ask()))
    expect(items.map((i) => i.type)).toEqual([
      'thinking_delta',
      'thinking_delta',
      'text_delta',
      'text_delta',
      'done',
    ])
    const done = items.at(-1)!
    expect(done.type === 'done' && done.message).toEqual({
      role: 'assistant',
      id: 'id-1',
      createdAt: 1_000,
      durationMs: 0,
      api: 'openrouter',
      provider: 'openrouter',
      model: MODEL,
      responseId: 'gen-kode-1',
      parts: [
        { type: 'thinking_text', text: 'Two plus two is four.' },
        { type: 'text', text: 'The answer is 4.' },
        {
          type: 'thinking_signature',
          format: 'openrouter',
          model: MODEL,
          signature: JSON.stringify([
            {
              type: 'reasoning.text',
              text: 'Two plus two is four.',
              format: 'anthropic-claude-v1',
              index: 0,
              signature: 'EqQBCkgIBxABGAIiQKode',
            },
          ]),
        },
      ],
      stopReason: 'stop',
      rawStopReason: 'stop',
      usage: {
        inputTokens: 1200,
        outputTokens: 40,
        totalTokens: 1240,
        cacheReadTokens: 1000,
        cacheWriteTokens: 150,
        reasoningTokens: 20,
      },
      costUsd: 0.00123,
    })
  })

  test('encrypted reasoning and a summary are kept by index next to a tool call', async () => {
    server().enqueue(streamOf('openrouter', fixture('openrouter', 'kode-encrypted-reasoning-tool')))
    const message = await router({ model: 'openai/gpt-5-mini' }).complete(ask())
    expect(message.parts).toEqual([
      { type: 'thinking_text', text: '**Planning** the lookup.' },
      { type: 'tool_call', id: 'call_kode', name: 'lookup', argumentsJson: '{"q":"kode"}' },
      {
        type: 'thinking_signature',
        format: 'openrouter',
        model: 'openai/gpt-5-mini',
        signature: JSON.stringify([
          {
            type: 'reasoning.summary',
            summary: '**Planning** the lookup.',
            format: 'openai-responses-v1',
            index: 0,
          },
          {
            type: 'reasoning.encrypted',
            data: 'gAAAAABoKode',
            id: 'rs_kode',
            format: 'openai-responses-v1',
            index: 1,
          },
        ]),
      },
    ])
    expect(message).toMatchObject({ stopReason: 'tool_use', costUsd: 0.000081 })
  })

  test('an error chunk mid-stream is a ProviderError with the partial', async () => {
    server().enqueue(streamOf('openrouter', fixture('openrouter', 'kode-in-stream-error')))
    const error = (await router()
      .complete(ask())
      .catch((e: unknown) => e)) as ProviderError
    expect(error).toMatchObject({
      status: 502,
      retryable: true,
      providerMessage: 'Provider returned error',
      partial: { parts: [{ type: 'text', text: 'Hel' }], stopReason: 'error' },
    })
  })
})

describe('openrouter request', () => {
  async function bodyOf(request: LLMRequest, config: Partial<ClientConfig> = {}) {
    server().enqueue(
      streamOf('openrouter', ['{"id":"g","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}']),
    )
    await router(config).complete(request)
    const recorded = server().requests.at(-1)!
    return { body: recorded.body as Record<string, unknown>, recorded }
  }

  test('posts the chat body with reasoning, usage accounting and bearer auth', async () => {
    const { body, recorded } = await bodyOf({
      messages: [user('Hi')],
      reasoning: { effort: 'high' },
      maxOutputTokens: 300,
    })
    expect(recorded.url).toBe('/chat/completions')
    expect(recorded.headers.authorization).toBe('Bearer sk-test-key-0123456789')
    expect(body).toEqual({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 300,
      reasoning: { effort: 'high' },
      usage: { include: true },
    })
    expect(
      (await bodyOf({ messages: [user('Hi')], reasoning: { budgetTokens: 2048 } })).body.reasoning,
    ).toEqual({
      max_tokens: 2048,
    })
  })

  test("this model's reasoning_details go back verbatim; other models' thinking becomes text", async () => {
    const details = [{ type: 'reasoning.text', text: 'hmm', signature: 's', index: 0 }]
    const own = { api: 'openrouter', provider: 'openrouter', model: MODEL }
    const messages: Message[] = [
      user('Q'),
      assistant(
        [
          { type: 'thinking_text', text: 'hmm' },
          { type: 'text', text: 'A' },
          {
            type: 'thinking_signature',
            signature: JSON.stringify(details),
            format: 'openrouter',
            model: MODEL,
          },
        ],
        own,
      ),
      assistant(
        [
          { type: 'thinking_text', text: 'other' },
          { type: 'text', text: 'B' },
        ],
        { ...own, model: 'openai/gpt-5' },
      ),
    ]
    const { body } = await bodyOf({ messages })
    expect((body.messages as unknown[]).slice(1)).toEqual([
      { role: 'assistant', content: 'A', reasoning_details: details },
      { role: 'assistant', content: '<thinking>\nother\n</thinking>\n\nB' },
    ])
  })
})

describe('openrouter reads the chat wire like openai-chat', () => {
  test.each([
    'kode-parallel-tool-calls',
    'groq-tool-call',
    'deepseek-tool-call',
    'azure-model-router.1',
    'kode-interleaved-reasoning',
  ])('%s gives the same parts, usage and stop reason', async (name) => {
    const payloads = fixture('openai-chat', name)
    server().enqueue(streamOf('openai-chat', payloads), streamOf('openrouter', payloads))
    const viaChat = await testClient(server(), { api: 'openai-chat', model: 'm' }).complete(ask())
    const viaRouter = await testClient(server(), { api: 'openrouter', model: 'm' }).complete(ask())
    const essentials = ({ parts, usage, stopReason, rawStopReason, responseId }: typeof viaChat) => ({
      parts,
      usage,
      stopReason,
      rawStopReason,
      responseId,
    })
    expect(essentials(viaRouter)).toEqual(essentials(viaChat))
  })

  test('image output arrives as image_delta items and image_url parts', async () => {
    server().enqueue(
      streamOf('openrouter', [
        '{"id":"g","choices":[{"index":0,"delta":{"content":"Here:","images":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]},"finish_reason":"stop"}]}',
      ]),
    )
    const items = await collect(router().stream(ask()))
    expect(items.slice(0, 2)).toEqual([
      { type: 'text_delta', text: 'Here:', responseId: 'g' },
      {
        type: 'image_delta',
        part: { type: 'image_url', url: 'data:image/png;base64,AAAA' },
        responseId: 'g',
      },
    ])
  })
})
