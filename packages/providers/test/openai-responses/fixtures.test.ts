import type { AssistantMessage, StreamItem } from '@kode/protocol'
import { ProviderError, type RetryInfo } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, collect, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const responses = (name: string, model = 'gpt-5.1') => {
  server().enqueue(streamOf('openai-responses', fixture('openai-responses', name)))
  return testClient(server(), { api: 'openai-responses', model })
}
const stamps = {
  id: 'id-1',
  createdAt: 1_000,
  durationMs: 0,
  provider: 'openai-responses',
  api: 'openai-responses',
}
const doneOf = (items: StreamItem[]): AssistantMessage => {
  const done = items.at(-1)
  if (done?.type !== 'done') throw new Error('no done')
  return done.message
}
/** Line `line` of a fixture, parsed. */
const event = (name: string, line: number) => JSON.parse(fixture('openai-responses', name)[line]!)
const failure = async (stream: AsyncIterable<StreamItem>, seen: StreamItem[] = []) => {
  try {
    for await (const item of stream) seen.push(item)
  } catch (error) {
    return error
  }
  throw new Error('the stream did not fail')
}

describe('openai-responses recorded streams', () => {
  test('text: the part keeps its message item id; usage with cached and reasoning counts', async () => {
    const message = await responses('azure-text.1').complete(ask())
    expect(message).toEqual({
      role: 'assistant',
      ...stamps,
      model: 'gpt-5.1',
      parts: [
        { type: 'text', text: 'Hello', itemId: 'msg_02ce8deeb6197db200698c5198ca0c81979bedbe6c98a8ab93' },
      ],
      usage: { inputTokens: 11, outputTokens: 11, cacheReadTokens: 0, reasoningTokens: 0, totalTokens: 22 },
      stopReason: 'stop',
      rawStopReason: 'completed',
      responseId: 'resp_02ce8deeb6197db200698c5196e9588197a572bbea62d38cd1',
      costUsd: (11 * 1.25 + 11 * 10) / 1e6,
    })
  })

  test('a function call keeps call id and item id; completed with calls is tool_use', async () => {
    const items = await collect(responses('azure-tool-call.1').stream(ask()))
    expect(items[0]).toEqual({
      type: 'tool_call_start',
      toolCallId: 'call_H5DxLSFnsGhiROnUiDHmgyc8',
      toolName: 'weather',
      responseId: 'resp_04041325ab8ae30400698c519fb7fc81979972618138fc336d',
    })
    expect(doneOf(items)).toMatchObject({
      parts: [
        {
          type: 'tool_call',
          id: 'call_H5DxLSFnsGhiROnUiDHmgyc8',
          name: 'weather',
          argumentsJson: '{"location":"San Francisco"}',
          itemId: 'fc_04041325ab8ae30400698c51c5468c8197a395f18875a5339f',
        },
      ],
      usage: { inputTokens: 45, outputTokens: 24, cacheReadTokens: 0, reasoningTokens: 0, totalTokens: 69 },
      stopReason: 'tool_use',
      rawStopReason: 'completed',
    })
  })

  test('reasoning summary then the encrypted content of the finished item, with its id', async () => {
    const name = 'openai-reasoning-encrypted-content.1'
    const done = event(name, 38).item
    const message = await responses(name, 'gpt-5.1-codex').complete(ask())
    expect(message.parts).toEqual([
      { type: 'thinking_text', text: done.summary[0].text },
      {
        type: 'thinking_signature',
        signature: done.encrypted_content,
        format: 'openai-responses',
        model: 'gpt-5.1-codex',
        itemId: 'rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9',
      },
      {
        type: 'tool_call',
        id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn',
        name: 'calculator',
        argumentsJson: '{"a":12,"b":7,"op":"add"}',
        itemId: 'fc_01830d662ab3856501693c32151234819091cfca267e98cc5f',
      },
    ])
    expect(message.usage).toEqual({
      inputTokens: 134,
      outputTokens: 28,
      cacheReadTokens: 0,
      reasoningTokens: 0,
      totalTokens: 162,
    })
  })

  test('ids rotating on every event (GitHub Copilot): items are followed by output index', async () => {
    const name = 'github-copilot-id-rotation.1'
    const message = await responses(name, 'gpt-5.3-codex').complete(ask())
    expect(message.parts).toEqual([
      { type: 'thinking_text', text: '**Counting character occurrences**' },
      {
        type: 'text',
        text: event(name, 67).item.content[0].text,
        itemId: 'capture-id-9',
        phase: 'final_answer',
      },
    ])
    expect(message).toMatchObject({
      usage: {
        inputTokens: 19,
        outputTokens: 105,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 44,
        totalTokens: 124,
      },
      stopReason: 'stop',
      responseId: 'capture-id-69',
    })
  })

  test('raw reasoning text (LM Studio), text, and a call whose arguments come only in .done', async () => {
    const name = 'lmstudio-tool-call.2'
    const message = await responses(name, 'zai-org/glm-4.7-flash').complete(ask())
    expect(message.parts).toEqual([
      { type: 'thinking_text', text: event(name, 51).text },
      {
        type: 'text',
        text: "I'll get the current weather information for San Francisco for you.",
        itemId: 'msg_pgh5uhkjz68thx8ph44ia',
      },
      {
        type: 'tool_call',
        id: 'call_3466696471230001',
        name: 'weather',
        argumentsJson: '{"location":"San Francisco"}',
        itemId: 'fc_5ee21s0i48xzoskcmd67h',
      },
    ])
    expect(message.stopReason).toBe('tool_use')
    expect(message.usage).toEqual(expect.objectContaining({ inputTokens: 182, outputTokens: 60 }))
  })

  test('an error event before any output is a ProviderError with the provider code, not retried', async () => {
    const error = await failure(responses('openai-error.1').stream(ask()))
    expect(ProviderError.is(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'insufficient_quota',
      retryable: false,
      providerMessage: expect.stringMatching(/^You exceeded your current quota/),
      partial: { parts: [], stopReason: 'error', isApiError: true },
    })
    expect(server().requests).toHaveLength(1)
  })
})

describe('openai-responses quirks (Kode fixtures)', () => {
  test('two summaries are two thinking parts; each reasoning item its own signature; text keeps phase', async () => {
    const message = await responses('kode-reasoning-summaries-phase').complete(ask())
    const signature = (signature: string, itemId: string) => ({
      type: 'thinking_signature',
      signature,
      format: 'openai-responses',
      model: 'gpt-5.1',
      itemId,
    })
    expect(message).toEqual({
      role: 'assistant',
      ...stamps,
      model: 'gpt-5.1',
      parts: [
        { type: 'thinking_text', text: '**Reading** the question' },
        { type: 'thinking_text', text: '**Planning** a lookup' },
        signature('gAAAA-kode-enc-1', 'rs_kode_1'),
        { type: 'text', text: 'Looking it up.', itemId: 'msg_kode_c', phase: 'commentary' },
        {
          type: 'tool_call',
          id: 'call_kode_1',
          name: 'search',
          argumentsJson: '{"q":"café"}',
          itemId: 'fc_kode_1',
        },
        signature('gAAAA-kode-enc-2', 'rs_kode_2'),
        { type: 'text', text: 'Searching now.', itemId: 'msg_kode_f', phase: 'final_answer' },
      ],
      usage: {
        inputTokens: 500,
        outputTokens: 90,
        cacheReadTokens: 384,
        reasoningTokens: 64,
        totalTokens: 590,
      },
      stopReason: 'tool_use',
      rawStopReason: 'completed',
      responseId: 'resp_kode_rs',
      costUsd: (116 * 1.25 + 384 * 0.125 + 90 * 10) / 1e6,
    })
  })

  test('when only response.completed carries the output, it is mapped whole, deltas included', async () => {
    const items = await collect(responses('kode-completed-only').stream(ask()))
    expect(items.slice(0, -1)).toEqual([
      { type: 'thinking_delta', text: 'Check the file first.', responseId: 'resp_kode_bulk' },
      { type: 'text_delta', text: 'Reading it.', responseId: 'resp_kode_bulk' },
      {
        type: 'tool_call_start',
        toolCallId: 'call_kode_b',
        toolName: 'read_file',
        responseId: 'resp_kode_bulk',
      },
    ])
    expect(doneOf(items)).toMatchObject({
      parts: [
        { type: 'thinking_text', text: 'Check the file first.' },
        {
          type: 'thinking_signature',
          signature: 'gAAAA-kode-bulk',
          format: 'openai-responses',
          model: 'gpt-5.1',
          itemId: 'rs_kode_b',
        },
        { type: 'text', text: 'Reading it.', itemId: 'msg_kode_b', phase: 'commentary' },
        {
          type: 'tool_call',
          id: 'call_kode_b',
          name: 'read_file',
          argumentsJson: '{"path":"README.md"}',
          itemId: 'fc_kode_b',
        },
      ],
      usage: { inputTokens: 40, outputTokens: 30, cacheReadTokens: 0, reasoningTokens: 12, totalTokens: 70 },
      stopReason: 'tool_use',
    })
  })

  test('parallel calls, one without arguments ({}), each announced once in order', async () => {
    const items = await collect(responses('kode-parallel-calls').stream(ask()))
    expect(items.map((i) => (i.type === 'tool_call_start' ? i.toolCallId : i.type))).toEqual([
      'call_kode_p1',
      'call_kode_p2',
      'done',
    ])
    expect(doneOf(items).parts).toEqual([
      {
        type: 'tool_call',
        id: 'call_kode_p1',
        name: 'list_files',
        argumentsJson: '{}',
        itemId: 'fc_kode_p1',
      },
      {
        type: 'tool_call',
        id: 'call_kode_p2',
        name: 'read_file',
        argumentsJson: '{"path":"notes.md"}',
        itemId: 'fc_kode_p2',
      },
    ])
  })

  test('a message that streamed no deltas is taken from its output_item.done, refusal included', async () => {
    const message = await responses('kode-done-without-deltas').complete(ask())
    expect(message.parts).toEqual([{ type: 'text', text: "I can't help with that.", itemId: 'msg_kode_nd' }])
    expect(message.usage).toEqual({ inputTokens: 9, outputTokens: 7, totalTokens: 16 })
    expect(message.stopDetails).toEqual({ category: 'refusal' })
  })

  test('refusal deltas stream as text, and the message is marked as a refusal', async () => {
    const items = await collect(responses('kode-refusal-deltas').stream(ask()))
    expect(items.slice(0, -1)).toEqual([
      { type: 'text_delta', text: "I'm sorry, ", responseId: 'resp_kode_ref' },
      { type: 'text_delta', text: "I can't help with that.", responseId: 'resp_kode_ref' },
    ])
    const done = items.at(-1)
    expect(done?.type === 'done' && done.message).toMatchObject({
      parts: [{ type: 'text', text: "I'm sorry, I can't help with that.", itemId: 'msg_kode_ref' }],
      stopReason: 'stop',
      rawStopReason: 'completed',
      stopDetails: { category: 'refusal' },
    })
  })

  test('a web search OpenAI ran is a server_tool part before the answer; it is not sent back', async () => {
    const message = await responses('kode-web-search').complete(ask())
    const search = {
      type: 'server_tool',
      format: 'openai-responses',
      block: {
        id: 'ws_kode_1',
        type: 'web_search_call',
        status: 'completed',
        action: { type: 'search', query: 'node 24 release date' },
      },
    }
    const cited = {
      type: 'url_citation',
      end_index: 29,
      start_index: 0,
      title: 'Node.js 24',
      url: 'https://nodejs.org/en/blog/release/v24.0.0',
    }
    expect(message.parts).toEqual([
      search,
      {
        type: 'text',
        text: 'Node 24 came out in May 2025.',
        itemId: 'msg_kode_ws',
        citations: [
          {
            url: cited.url,
            title: cited.title,
            providerFields: { format: 'openai-responses', fields: cited },
          },
        ],
      },
    ])
    expect(message.stopReason).toBe('stop')
    server().enqueue(streamOf('openai-responses', fixture('openai-responses', 'azure-text.1')))
    await testClient(server(), { api: 'openai-responses', model: 'gpt-5.1' }).complete({
      messages: [
        ...ask().messages,
        message,
        { role: 'user', id: 'u2', createdAt: 2, parts: [{ type: 'text', text: 'Thanks' }] },
      ],
    })
    const input = (server().requests.at(-1)!.body as { input: { type?: string; role?: string }[] }).input
    expect(input.map((item) => item.type ?? item.role)).toEqual(['user', 'assistant', 'user'])
  })

  test('a plain answer has no stopDetails', async () => {
    const message = await responses('azure-text.1').complete(ask())
    expect(message.stopDetails).toBeUndefined()
  })

  test('response.incomplete for max_output_tokens is length; the cut call is incomplete', async () => {
    const message = await responses('kode-incomplete-max-tokens').complete(ask())
    expect(message).toMatchObject({
      parts: [
        { type: 'text', text: 'Writing it.', itemId: 'msg_kode_inc' },
        {
          type: 'tool_call',
          id: 'call_kode_inc',
          name: 'write_file',
          argumentsJson: '{"content":"Once upon',
          itemId: 'fc_kode_inc',
          incomplete: true,
        },
      ],
      stopReason: 'length',
      rawStopReason: 'max_output_tokens',
    })
  })

  test('response.failed before output is a retryable error, and the retry succeeds', async () => {
    const client = responses('kode-failed')
    server().enqueue(streamOf('openai-responses', fixture('openai-responses', 'azure-text.1')))
    const retries: RetryInfo[] = []
    const message = await client.complete(ask(), { onRetry: (info) => retries.push(info) })
    expect(message.parts).toMatchObject([{ type: 'text', text: 'Hello' }])
    expect(retries).toHaveLength(1)
    expect(retries[0]!.error).toMatchObject({
      code: 'server_error',
      retryable: true,
      providerMessage: 'The server had an error while processing your request.',
    })
    expect(server().requests).toHaveLength(2)
  })

  test('response.failed with usage: the retry hands onRetry what the failed attempt was billed', async () => {
    const client = responses('kode-failed-billed', 'gpt-5')
    server().enqueue(streamOf('openai-responses', fixture('openai-responses', 'azure-text.1')))
    const retries: RetryInfo[] = []
    await client.complete(ask(), { onRetry: (info) => retries.push(info) })
    expect(retries).toHaveLength(1)
    expect(retries[0]!.error).toMatchObject({ code: 'server_error', retryable: true })
    expect(retries[0]!.partial).toMatchObject({
      parts: [],
      stopReason: 'error',
      responseId: 'resp_kode_billed',
      model: 'gpt-5',
      usage: { inputTokens: 900, outputTokens: 0, totalTokens: 900 },
      costUsd: (900 * 1.25) / 1e6,
    })
  })

  test('an error event after output fails with the partial message and is not retried', async () => {
    const seen: StreamItem[] = []
    const error = await failure(responses('kode-error-event').stream(ask()), seen)
    expect(seen.map((i) => i.type)).toEqual(['text_delta'])
    expect(error).toMatchObject({
      code: 'rate_limit_exceeded',
      retryable: true,
      providerMessage: 'Rate limit reached for requests.',
      partial: { parts: [{ type: 'text', text: 'Half', itemId: 'msg_kode_err' }], stopReason: 'error' },
    })
    expect(server().requests).toHaveLength(1)
  })

  test('an error event whose code is null has no code: its type is not taken for one', async () => {
    const error = await failure(responses('kode-error-event-null-code').stream(ask()))
    expect(ProviderError.is(error)).toBe(true)
    expect((error as ProviderError).code).toBeUndefined()
    expect((error as ProviderError).message).toBe(
      'openai-responses reported an error in the stream: An error occurred while processing your request.',
    )
  })

  test('unknown events and item types are ignored; an unknown incomplete reason is kept raw only', async () => {
    const message = await responses('kode-unknown-values').complete(ask())
    // The annotation streamed before the response ended is kept, though the incomplete item's
    // final copy no longer lists it.
    const annotation = { type: 'url_citation', url: 'https://example.com' }
    expect(message.parts).toEqual([
      {
        type: 'text',
        text: 'Partly',
        itemId: 'msg_kode_unk',
        citations: [
          { url: 'https://example.com', providerFields: { format: 'openai-responses', fields: annotation } },
        ],
      },
    ])
    expect(message.stopReason).toBeUndefined()
    expect(message.rawStopReason).toBe('content_filter')
  })
})
