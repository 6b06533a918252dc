import { describe, expect, test } from 'vitest'
import { ask, collect, fixture, joinDeltas, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const chat = (model: string, name: string) => {
  server().enqueue(streamOf('openai-chat', fixture('openai-chat', name)))
  return testClient(server(), { api: 'openai-chat', model })
}
const stamps = { id: 'id-1', createdAt: 1_000, durationMs: 0, provider: 'openai-chat', api: 'openai-chat' }

describe('openai-chat recorded streams', () => {
  test('OpenAI text: one text part, usage from the usage-only chunk, priced from the catalog', async () => {
    const payloads = fixture('openai-chat', 'openai-text')
    const message = await chat('gpt-4.1-nano', 'openai-text').complete(ask())
    expect(message).toEqual({
      role: 'assistant',
      ...stamps,
      model: 'gpt-4.1-nano',
      parts: [{ type: 'text', text: joinDeltas(payloads, 'content') }],
      usage: { inputTokens: 16, outputTokens: 300, totalTokens: 316, cacheReadTokens: 0, reasoningTokens: 0 },
      stopReason: 'stop',
      rawStopReason: 'stop',
      responseId: 'chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0',
      costUsd: (16 * 0.1 + 300 * 0.4) / 1e6,
    })
  })

  test('Mistral (Magistral): content as a list of thinking and text chunks; other chunk types ignored', async () => {
    const items = await collect(chat('magistral-medium-2509', 'kode-mistral-thinking-chunks').stream(ask()))
    const id = 'c5b1d0b2e2a94f0e9d1a7f3b6c2e8a41'
    expect(items.slice(0, -1)).toEqual([
      { type: 'thinking_delta', text: 'Two plus two ', responseId: id },
      { type: 'thinking_delta', text: 'is four.', responseId: id },
      { type: 'text_delta', text: 'The answer ', responseId: id },
      { type: 'text_delta', text: 'is 4.', responseId: id },
    ])
    const done = items.at(-1)
    expect(done?.type === 'done' && done.message).toMatchObject({
      parts: [
        { type: 'thinking_text', text: 'Two plus two is four.' },
        { type: 'text', text: 'The answer is 4.' },
      ],
      usage: { inputTokens: 12, outputTokens: 28, totalTokens: 40 },
      stopReason: 'stop',
    })
  })

  test('refusal: streamed as text, the message marked { category: refusal }, the stop kept as sent', async () => {
    const items = await collect(chat('gpt-4o', 'kode-refusal').stream(ask()))
    const id = 'chatcmpl-kode-refusal'
    expect(items.slice(0, -1)).toEqual([
      { type: 'text_delta', text: "I'm sorry, ", responseId: id },
      { type: 'text_delta', text: "I can't help with that.", responseId: id },
    ])
    const done = items.at(-1)
    expect(done?.type === 'done' && done.message).toMatchObject({
      parts: [{ type: 'text', text: "I'm sorry, I can't help with that." }],
      stopReason: 'stop',
      rawStopReason: 'stop',
      stopDetails: { category: 'refusal' },
      usage: { inputTokens: 21, outputTokens: 9, totalTokens: 30 },
    })
  })

  test('Azure: prompt_filter_results chunk with empty choices and id is tolerated', async () => {
    const items = await collect(chat('gpt-5-nano', 'azure-model-router.1').stream(ask()))
    expect(items.slice(0, -1)).toEqual(
      ['Capital', ' of', ' Denmark', '.'].map((text) => ({
        type: 'text_delta',
        text,
        responseId: 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt',
      })),
    )
    const done = items.at(-1)
    expect(done?.type === 'done' && done.message).toMatchObject({
      parts: [{ type: 'text', text: 'Capital of Denmark.' }],
      usage: { inputTokens: 15, outputTokens: 78, totalTokens: 93, cacheReadTokens: 0, reasoningTokens: 64 },
      stopReason: 'stop',
      responseId: 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt',
    })
  })

  test('DeepSeek reasoning: reasoning_content becomes a thinking part before the text', async () => {
    const payloads = fixture('openai-chat', 'deepseek-reasoning')
    const message = await chat('deepseek-reasoner', 'deepseek-reasoning').complete(ask())
    expect(message.parts).toEqual([
      { type: 'thinking_text', text: joinDeltas(payloads, 'reasoning_content') },
      { type: 'text', text: joinDeltas(payloads, 'content') },
    ])
    expect(message.usage).toEqual({
      inputTokens: 18,
      outputTokens: 219,
      totalTokens: 237,
      cacheReadTokens: 0,
      reasoningTokens: 205,
    })
    expect(message.costUsd).toBeCloseTo((18 * 0.28 + 219 * 0.42) / 1e6, 15)
  })

  test('DeepSeek tool call: reasoning, then a call with streamed arguments, cache hits counted', async () => {
    const payloads = fixture('openai-chat', 'deepseek-tool-call')
    const items = await collect(chat('deepseek-reasoner', 'deepseek-tool-call').stream(ask()))
    expect(items.filter((i) => i.type === 'tool_call_start')).toEqual([
      {
        type: 'tool_call_start',
        toolCallId: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF',
        toolName: 'weather',
        responseId: 'cca85624-4056-401f-b220-d77601d1f70d',
      },
    ])
    const done = items.at(-1)!
    expect(done.type === 'done' && done.message).toMatchObject({
      parts: [
        { type: 'thinking_text', text: joinDeltas(payloads, 'reasoning_content') },
        {
          type: 'tool_call',
          id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF',
          name: 'weather',
          argumentsJson: '{"location": "San Francisco"}',
        },
      ],
      usage: {
        inputTokens: 339,
        outputTokens: 83,
        totalTokens: 422,
        cacheReadTokens: 320,
        reasoningTokens: 39,
      },
      stopReason: 'tool_use',
      rawStopReason: 'tool_calls',
    })
  })

  test('Groq: a whole tool call in one delta, usage on the finish chunk', async () => {
    const message = await chat('llama-3.3-70b-versatile', 'groq-tool-call').complete(ask())
    expect(message.parts).toEqual([
      { type: 'tool_call', id: 'tk85n1k4m', name: 'weather', argumentsJson: '{}' },
    ])
    expect(message.usage).toEqual({ inputTokens: 210, outputTokens: 15, totalTokens: 225 })
    expect(message.stopReason).toBe('tool_use')
  })

  test('Alibaba: empty ids on later argument chunks do not start new calls', async () => {
    const items = await collect(chat('qwen3-max', 'alibaba-tool-call').stream(ask()))
    expect(items.filter((i) => i.type === 'tool_call_start')).toHaveLength(1)
    const done = items.at(-1)!
    expect(done.type === 'done' && done.message).toMatchObject({
      parts: [
        {
          type: 'tool_call',
          id: 'call_eee11723464a4b9eb8cee71d',
          name: 'weather',
          argumentsJson: '{"location": "San Francisco"}',
        },
      ],
      usage: { inputTokens: 295, outputTokens: 22, totalTokens: 317, cacheReadTokens: 0 },
      stopReason: 'tool_use',
    })
  })
})

describe('openai-chat hand-written streams', () => {
  test('arguments sent as a JSON object (llama.cpp, TGI) are kept as its JSON text, never dropped', async () => {
    const message = await chat('llama', 'kode-object-arguments').complete(ask())
    expect(message.parts).toEqual([
      {
        type: 'tool_call',
        id: 'call_x',
        name: 'delete_file',
        argumentsJson: '{"path":"build/tmp.txt","force":false}',
      },
    ])
    expect(message.stopReason).toBe('tool_use')
  })

  test('parallel tool calls keep their order; a call without arguments gets {}', async () => {
    const items = await collect(chat('gpt-4.1', 'kode-parallel-tool-calls').stream(ask()))
    expect(
      items
        .filter((i) => i.type === 'tool_call_start')
        .map((i) => i.type === 'tool_call_start' && i.toolCallId),
    ).toEqual(['call_a', 'call_b', 'call_c'])
    const done = items.at(-1)!
    expect(done.type === 'done' && done.message).toMatchObject({
      parts: [
        { type: 'tool_call', id: 'call_a', name: 'read_file', argumentsJson: '{"path":"a.txt"}' },
        { type: 'tool_call', id: 'call_b', name: 'list_dir', argumentsJson: '{"dir":"."}' },
        { type: 'tool_call', id: 'call_c', name: 'now', argumentsJson: '{}' },
      ],
      usage: {
        inputTokens: 2048,
        outputTokens: 60,
        totalTokens: 2108,
        cacheReadTokens: 1536,
        reasoningTokens: 0,
      },
      costUsd: (512 * 2 + 1536 * 0.5 + 60 * 8) / 1e6,
    })
  })

  test('text, reasoning, text stays three parts in stream order', async () => {
    const message = await chat('gpt-4.1', 'kode-interleaved-reasoning').complete(ask())
    expect(message.parts).toEqual([
      { type: 'text', text: 'Let me check. ' },
      { type: 'thinking_text', text: 'The user wants a short answer.' },
      { type: 'text', text: 'It is 42.' },
    ])
  })

  test('a new id under a known index starts a new call', async () => {
    const message = await chat('gpt-4.1', 'kode-rotating-ids').complete(ask())
    expect(message.parts).toEqual([
      { type: 'tool_call', id: 'call_1', name: 'lookup', argumentsJson: '{"q":"a"}' },
      { type: 'tool_call', id: 'call_2', name: 'lookup', argumentsJson: '{"q":"b"}' },
    ])
  })

  test('a call a new id replaced under its index is settled too: no arguments are {}', async () => {
    const message = await chat('gpt-4.1', 'kode-rotating-ids-no-args').complete(ask())
    expect(message.parts).toEqual([
      { type: 'tool_call', id: 'call_1', name: 'now', argumentsJson: '{}' },
      { type: 'tool_call', id: 'call_2', name: 'lookup', argumentsJson: '{"q":"b"}' },
    ])
  })

  test('calls without ids or indexes get generated ids and are still announced', async () => {
    const items = await collect(chat('gemini-2.5-flash', 'kode-no-ids').stream(ask()))
    expect(items.map((i) => i.type)).toEqual(['tool_call_start', 'tool_call_start', 'done'])
    const done = items.at(-1)!
    expect(done.type === 'done' && done.message.parts).toEqual([
      { type: 'tool_call', id: 'call_id-1', name: 'first', argumentsJson: '{}' },
      { type: 'tool_call', id: 'call_id-2', name: 'second', argumentsJson: '{"x":1}' },
    ])
    expect(items[0]).toEqual({
      type: 'tool_call_start',
      toolCallId: 'call_id-1',
      toolName: 'first',
      responseId: 'chatcmpl-kode-noid',
    })
  })

  test('an error chunk inside the stream throws a ProviderError carrying the partial message', async () => {
    const client = chat('gpt-4.1', 'kode-in-stream-error')
    const seen: string[] = []
    const run = async () => {
      for await (const item of client.stream(ask())) if (item.type === 'text_delta') seen.push(item.text)
    }
    const error = await run().catch((e: unknown) => e)
    expect(seen).toEqual(['Partial'])
    expect(error).toMatchObject({
      name: 'ProviderError',
      code: 'server_error',
      retryable: true,
      partial: {
        parts: [{ type: 'text', text: 'Partial' }],
        stopReason: 'error',
        isApiError: true,
        responseId: 'chatcmpl-kode-err',
      },
    })
    expect(server().requests).toHaveLength(1)
  })
})

describe('openai-chat finish reasons', () => {
  const finish = (reason: string) =>
    `{"id":"c","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":${JSON.stringify(reason)}}]}`
  test.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['error', 'error'],
    ['content_filter', undefined],
    ['some_new_reason', undefined],
  ])('%s maps to %s and is kept raw', async (raw, mapped) => {
    server().enqueue(streamOf('openai-chat', [finish(raw)]))
    const message = await testClient(server(), { api: 'openai-chat', model: 'm' }).complete(ask())
    expect(message.rawStopReason).toBe(raw)
    expect(message.stopReason).toBe(mapped)
  })

  test('length leaves a call whose arguments did not close incomplete', async () => {
    server().enqueue(
      streamOf('openai-chat', [
        '{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t1","function":{"name":"w","arguments":"{\\"a\\":"}}]},"finish_reason":"length"}]}',
      ]),
    )
    const message = await testClient(server(), { api: 'openai-chat', model: 'm' }).complete(ask())
    expect(message.parts).toEqual([
      { type: 'tool_call', id: 't1', name: 'w', argumentsJson: '{"a":', incomplete: true },
    ])
  })
})

describe('openai-chat reasoning fields', () => {
  const chunk = (delta: Record<string, string>, finish?: string) =>
    JSON.stringify({ id: 'c', choices: [{ index: 0, delta, finish_reason: finish ?? null }] })

  test.each([
    ['reasoning_content', 'DeepSeek, vLLM, LM Studio'],
    ['reasoning', 'OpenRouter, Groq, Ollama'],
    ['reasoning_text', 'other gateways'],
  ])('%s (%s) becomes thinking', async (field) => {
    server().enqueue(
      streamOf('openai-chat', [
        chunk({ [field]: 'Think ' }),
        chunk({ [field]: 'twice.' }),
        chunk({ content: 'Done.' }, 'stop'),
      ]),
    )
    const items = await collect(testClient(server(), { api: 'openai-chat', model: 'm' }).stream(ask()))
    expect(items.slice(0, -1)).toEqual([
      { type: 'thinking_delta', text: 'Think ', responseId: 'c' },
      { type: 'thinking_delta', text: 'twice.', responseId: 'c' },
      { type: 'text_delta', text: 'Done.', responseId: 'c' },
    ])
    const done = items.at(-1)!
    expect(done.type === 'done' && done.message.parts).toEqual([
      { type: 'thinking_text', text: 'Think twice.' },
      { type: 'text', text: 'Done.' },
    ])
  })

  test('a server that sends the same reasoning in two fields gets it once', async () => {
    server().enqueue(
      streamOf('openai-chat', [chunk({ reasoning_content: 'Once.', reasoning: 'Once.' }, 'stop')]),
    )
    const message = await testClient(server(), { api: 'openai-chat', model: 'm' }).complete(ask())
    expect(message.parts).toEqual([{ type: 'thinking_text', text: 'Once.' }])
  })
})
