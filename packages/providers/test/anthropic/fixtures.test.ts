import type { StreamItem } from '@kode/protocol'
import type { ProviderError, RetryInfo } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, collect, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const claude = (name: string, model = 'claude-sonnet-4-5') => {
  server().enqueue(streamOf('anthropic', fixture('anthropic', name)))
  return testClient(server(), { api: 'anthropic', model })
}
const stamps = { id: 'id-1', createdAt: 1_000, durationMs: 0, provider: 'anthropic', api: 'anthropic' }
const doneOf = (items: StreamItem[]) => {
  const done = items.at(-1)
  if (done?.type !== 'done') throw new Error('no done')
  return done.message
}

describe('anthropic recorded streams', () => {
  test('text: one part, inclusive usage, end_turn -> stop, catalog cost', async () => {
    const message = await claude('anthropic-text').complete(ask())
    expect(message).toEqual({
      role: 'assistant',
      ...stamps,
      model: 'claude-sonnet-4-5',
      parts: [
        {
          type: 'text',
          text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
        },
      ],
      usage: { inputTokens: 12, outputTokens: 30, totalTokens: 42, cacheReadTokens: 0, cacheWriteTokens: 0 },
      stopReason: 'stop',
      rawStopReason: 'end_turn',
      responseId: 'msg_01QC4g3HwBThD4BaNtBckFDJ',
      costUsd: (12 * 3 + 30 * 15) / 1e6,
    })
  })

  test('thinking with a signature delta attached to its block, then text', async () => {
    const items = await collect(claude('anthropic-clear-thinking.1').stream(ask()))
    expect(items.filter((i) => i.type === 'thinking_delta')).toHaveLength(9)
    expect(doneOf(items).parts).toEqual([
      {
        type: 'thinking_text',
        text: 'The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185',
      },
      {
        type: 'thinking_signature',
        signature: expect.stringMatching(/^EvQBCkYICxgCKkAxhD4N.*6Ca17BgB$/),
        format: 'anthropic',
        model: 'claude-sonnet-4-5',
      },
      { type: 'text', text: '925 ÷ 5 = 185' },
    ])
    expect(doneOf(items).usage).toEqual({
      inputTokens: 69,
      outputTokens: 53,
      totalTokens: 122,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    })
  })

  test('tool_use with input_json_delta and pings in between', async () => {
    const items = await collect(claude('anthropic-json-other-tool.1', 'claude-haiku-4-5').stream(ask()))
    expect(items[0]).toEqual({
      type: 'tool_call_start',
      toolCallId: 'toolu_019Zvehfe1XQWweT1pm7okyt',
      toolName: 'weather',
      responseId: 'msg_01CD3XaZfhNabxRt1SG5ybtK',
    })
    expect(doneOf(items)).toMatchObject({
      parts: [
        {
          type: 'tool_call',
          id: 'toolu_019Zvehfe1XQWweT1pm7okyt',
          name: 'weather',
          argumentsJson: '{"location": "San Francisco"}',
        },
      ],
      stopReason: 'tool_use',
      rawStopReason: 'tool_use',
      usage: { inputTokens: 843, outputTokens: 28 },
    })
  })

  test('a tool call without arguments gets {}', async () => {
    const message = await claude('anthropic-tool-no-args').complete(ask())
    expect(message.parts).toEqual([
      { type: 'text', text: "I'll update the issue list for you." },
      {
        type: 'tool_call',
        id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP',
        name: 'updateIssueList',
        argumentsJson: '{}',
      },
    ])
  })

  test('message_delta usage updates replace message_start counts', async () => {
    const message = await claude('anthropic-message-delta-input-tokens', 'claude-opus-4-5').complete(ask())
    expect(message.parts).toEqual([{ type: 'text', text: 'pong' }])
    expect(message.usage).toEqual({ inputTokens: 61, outputTokens: 2, totalTokens: 63 })
  })

  test('refusal has no stop reason of ours and is kept raw', async () => {
    const message = await claude('anthropic-refusal').complete(ask())
    expect(message).toMatchObject({
      parts: [],
      rawStopReason: 'refusal',
      usage: { inputTokens: 18, outputTokens: 5 },
    })
    expect(message.stopReason).toBeUndefined()
  })

  test("a refusal's stop_details category and explanation are kept as stopDetails, not as an error", async () => {
    const message = await claude('anthropic-refusal').complete(ask())
    expect(message.stopDetails).toEqual({
      category: 'cyber',
      explanation:
        "This request triggered restrictions on violative cyber content and was blocked under Anthropic's Usage Policy.",
    })
    expect(message).not.toHaveProperty('errorMessage')
    expect(message).not.toHaveProperty('isApiError')
  })

  test('stop_details without a category or explanation leaves no stopDetails', async () => {
    server().enqueue(
      streamOf('anthropic', [
        '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":1}}}',
        '{"type":"message_delta","delta":{"stop_reason":"refusal","stop_details":{"type":"refusal","category":null}}}',
        '{"type":"message_stop"}',
      ]),
    )
    const message = await testClient(server(), { api: 'anthropic', model: 'm' }).complete(ask())
    expect(message.rawStopReason).toBe('refusal')
    expect(message).not.toHaveProperty('stopDetails')
  })

  test("output_tokens_details.thinking_tokens is the message's reasoning count, part of its output", async () => {
    const message = await claude('kode-thinking-tokens').complete(ask())
    expect(message).toEqual({
      role: 'assistant',
      ...stamps,
      model: 'claude-sonnet-4-5',
      parts: [
        { type: 'thinking_text', text: 'Two and two make four.' },
        {
          type: 'thinking_signature',
          signature: 'EqQBCkgIBhABGAIqQKodeThinkingTokensSignature',
          format: 'anthropic',
          model: 'claude-sonnet-4-5',
        },
        { type: 'text', text: '4' },
      ],
      usage: {
        inputTokens: 40,
        outputTokens: 31,
        reasoningTokens: 26,
        totalTokens: 71,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      },
      stopReason: 'stop',
      rawStopReason: 'end_turn',
      responseId: 'msg_01KodeThinkingTokens0001',
      costUsd: (40 * 3 + 31 * 15) / 1e6,
    })
  })

  test('thinking_tokens sent as null later keeps the count already reported', async () => {
    server().enqueue(
      streamOf('anthropic', [
        '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":9,"output_tokens_details":{"thinking_tokens":7}}}}',
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"ok"}}',
        '{"type":"content_block_stop","index":0}',
        '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9,"output_tokens_details":null}}',
        '{"type":"message_stop"}',
      ]),
    )
    const message = await testClient(server(), { api: 'anthropic', model: 'm' }).complete(ask())
    expect(message.usage).toEqual({ inputTokens: 1, outputTokens: 9, reasoningTokens: 7, totalTokens: 10 })
  })

  test('unknown content blocks (fallback) are skipped', async () => {
    const message = await claude('anthropic-fallback').complete(ask())
    expect(message.parts).toEqual([
      { type: 'text', text: 'The printing press was invented by Johannes Gutenberg around 1440.' },
    ])
    expect(message.usage).toMatchObject({ inputTokens: 412, outputTokens: 264 })
  })

  test('a duplicated message_start of the same message is ignored', async () => {
    const items = await collect(claude('duplicate-message-start').stream(ask()))
    expect(items.map((i) => i.type)).toEqual(['text_delta', 'done'])
    expect(doneOf(items)).toMatchObject({
      parts: [{ type: 'text', text: 'Hello, World!' }],
      usage: { inputTokens: 17, outputTokens: 227 },
      responseId: 'msg_dup',
    })
  })

  test('a second message spliced into the stream fails as stream_spliced with the first as partial', async () => {
    const items: StreamItem[] = []
    const run = async () => {
      for await (const item of claude('spliced-message-start').stream(ask())) items.push(item)
    }
    const error = (await run().catch((e: unknown) => e)) as ProviderError
    expect(error).toMatchObject({ code: 'stream_spliced', retryable: true })
    expect(error.message).toBe('anthropic: a second message (msg_second) started inside msg_first')
    expect(error.partial?.parts).toEqual([
      { type: 'thinking_text', text: 'I will call the tool.' },
      { type: 'thinking_signature', signature: 'sig-first', format: 'anthropic', model: 'claude-sonnet-4-5' },
      {
        type: 'tool_call',
        id: 'toolu_first',
        name: 'test-tool',
        argumentsJson: '{"value":"Spark',
        incomplete: true,
      },
    ])
    expect(items.map((i) => i.type)).toEqual(['thinking_delta', 'tool_call_start'])
  })
})

describe('anthropic hand-written streams', () => {
  test('redacted thinking, signed thinking, text and parallel tools, with cache usage made inclusive', async () => {
    const message = await claude('kode-redacted-thinking-tools').complete(ask())
    expect(message.parts).toEqual([
      {
        type: 'thinking_signature',
        signature:
          'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj',
        format: 'anthropic',
        model: 'claude-sonnet-4-5',
        redacted: true,
      },
      { type: 'thinking_text', text: 'Two files to read; both at once.' },
      {
        type: 'thinking_signature',
        signature: 'ErUBCkYIBxgCIkBpart2==',
        format: 'anthropic',
        model: 'claude-sonnet-4-5',
      },
      { type: 'text', text: 'Reading both files — “a” and “b”.' },
      { type: 'tool_call', id: 'toolu_a', name: 'read_file', argumentsJson: '{"path": "a.txt"}' },
      { type: 'tool_call', id: 'toolu_b', name: 'read_file', argumentsJson: '{"path": "b.txt"}' },
    ])
    expect(message.usage).toEqual({
      inputTokens: 4312,
      outputTokens: 97,
      totalTokens: 4409,
      cacheReadTokens: 4000,
      cacheWriteTokens: 300,
    })
    expect(message.costUsd).toBeCloseTo((12 * 3 + 4000 * 0.3 + 300 * 3.75 + 97 * 15) / 1e6, 15)
  })

  test('max_tokens -> length; a tool call cut mid-arguments is incomplete even though its block stopped', async () => {
    const message = await claude('kode-max-tokens').complete(ask())
    expect(message).toMatchObject({ stopReason: 'length', rawStopReason: 'max_tokens' })
    expect(message.parts).toEqual([
      {
        type: 'tool_call',
        id: 'toolu_cut',
        name: 'write_file',
        argumentsJson: '{"path": "a.txt", "content": "lorem ip',
        incomplete: true,
      },
    ])
  })

  test('max_tokens right after a tool call began: the call has no arguments and is incomplete, not {}', async () => {
    // The limit fell between the tool's name and its input: the API still stops the block.
    server().enqueue(
      streamOf('anthropic', [
        '{"type":"message_start","message":{"id":"msg_cut0","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":50,"output_tokens":1}}}',
        '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_cut0","name":"delete_files","input":{}}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}',
        '{"type":"content_block_stop","index":0}',
        '{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":8}}',
        '{"type":"message_stop"}',
      ]),
    )
    const message = await testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' }).complete(
      ask(),
    )
    expect(message).toMatchObject({ stopReason: 'length', rawStopReason: 'max_tokens' })
    expect(message.parts).toEqual([
      { type: 'tool_call', id: 'toolu_cut0', name: 'delete_files', argumentsJson: '', incomplete: true },
    ])
  })

  test('an error event after output throws the typed error with the partial', async () => {
    const error = (await claude('kode-in-stream-error')
      .complete(ask())
      .catch((e: unknown) => e)) as ProviderError
    expect(error).toMatchObject({
      name: 'ProviderError',
      code: 'overloaded_error',
      retryable: true,
      providerMessage: 'Overloaded',
      partial: {
        parts: [{ type: 'text', text: 'Working on' }],
        stopReason: 'error',
        responseId: 'msg_kode_err',
      },
    })
    expect(server().requests).toHaveLength(1)
  })

  test('an overloaded error before any output is retried', async () => {
    server().enqueue(streamOf('anthropic', fixture('anthropic', 'kode-overloaded-before-output')))
    server().enqueue(streamOf('anthropic', fixture('anthropic', 'anthropic-text')))
    const message = await testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' }).complete(
      ask(),
    )
    expect(message.stopReason).toBe('stop')
    expect(server().requests).toHaveLength(2)
  })

  test('a retried attempt that reported usage before failing hands onRetry what it was billed', async () => {
    server().enqueue(streamOf('anthropic', fixture('anthropic', 'kode-overloaded-before-output')))
    server().enqueue(streamOf('anthropic', fixture('anthropic', 'kode-overloaded-after-message-start')))
    server().enqueue(streamOf('anthropic', fixture('anthropic', 'anthropic-text')))
    const retries: RetryInfo[] = []
    const message = await testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' }).complete(
      ask(),
      { onRetry: (info) => retries.push(info) },
    )
    expect(server().requests).toHaveLength(3)
    expect(retries.map((r) => r.error.code)).toEqual(['overloaded_error', 'overloaded_error'])
    // The first attempt failed before message_start: nothing billed, nothing handed on.
    expect(retries[0]).not.toHaveProperty('partial')
    expect(retries[1]?.partial).toEqual({
      role: 'assistant',
      ...stamps,
      model: 'claude-sonnet-4-5',
      parts: [],
      responseId: 'msg_kode_busy',
      stopReason: 'error',
      isApiError: true,
      errorMessage: 'anthropic reported an error in the stream overloaded_error: Overloaded',
      usage: {
        inputTokens: 2000,
        outputTokens: 1,
        totalTokens: 2001,
        cacheReadTokens: 800,
        cacheWriteTokens: 0,
      },
      costUsd: (1200 * 3 + 800 * 0.3 + 1 * 15) / 1e6,
    })
    // The response that followed carries its own usage only.
    expect(message.usage).toMatchObject({ inputTokens: 12, outputTokens: 30 })
  })
})

describe('anthropic stop reasons', () => {
  const stream = (reason: string) => [
    '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":1}}}',
    `{"type":"message_delta","delta":{"stop_reason":"${reason}"},"usage":{"output_tokens":2}}`,
    '{"type":"message_stop"}',
  ]
  test.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_use'],
    ['refusal', undefined],
    ['pause_turn', undefined],
    ['brand_new', undefined],
  ])('%s maps to %s and is kept raw', async (raw, mapped) => {
    server().enqueue(streamOf('anthropic', stream(raw)))
    const message = await testClient(server(), { api: 'anthropic', model: 'm' }).complete(ask())
    expect(message.rawStopReason).toBe(raw)
    expect(message.stopReason).toBe(mapped)
  })
})
