import type { AssistantMessage, StreamItem } from '@kode/protocol'
import { ProviderError } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, collect, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const MODEL = 'claude-sonnet-4-5'
const claude = (name: string) => {
  server().enqueue(streamOf('anthropic', fixture('anthropic', name)))
  return testClient(server(), { api: 'anthropic', model: MODEL })
}
const doneOf = (items: StreamItem[]): AssistantMessage => {
  const done = items.at(-1)
  if (done?.type !== 'done') throw new Error('no done')
  return done.message
}
/** The `content_block` of fixture line `line`, as recorded. */
const startBlock = (name: string, line: number) => JSON.parse(fixture('anthropic', name)[line]!).content_block
const kept = (block: unknown) => ({ type: 'server_tool', format: 'anthropic', block })

describe('Anthropic server-tool blocks are kept whole, never tool calls', () => {
  test('web search and web fetch: streamed input assembled, results kept, text around them', async () => {
    const items = await collect(claude('kode-server-tools-web').stream(ask()))
    expect(items.some((i) => i.type === 'tool_call_start')).toBe(false)
    const message = doneOf(items)
    expect(message.parts).toEqual([
      { type: 'text', text: 'Let me look that up.' },
      kept({
        type: 'server_tool_use',
        id: 'srvtoolu_01WebSearchKode0001',
        name: 'web_search',
        input: { query: 'Gutenberg printing press year' },
        caller: { type: 'direct' },
      }),
      kept(startBlock('kode-server-tools-web', 9)),
      kept({
        type: 'server_tool_use',
        id: 'srvtoolu_01WebFetchKode00001',
        name: 'web_fetch',
        input: { url: 'https://en.wikipedia.org/wiki/Printing_press' },
        caller: { type: 'direct' },
      }),
      kept(startBlock('kode-server-tools-web', 14)),
      { type: 'text', text: 'Gutenberg built it around 1440.' },
    ])
    expect(message.stopReason).toBe('stop')
  })

  test('bash, text editor and code execution, a container upload, and one real client call', async () => {
    const items = await collect(claude('kode-server-tools-code').stream(ask()))
    const message = doneOf(items)
    const name = 'kode-server-tools-code'
    expect(message.parts).toEqual([
      kept({ ...startBlock(name, 1), input: { command: "python3 -c 'print(6*7)'" } }),
      kept(startBlock(name, 4)),
      kept({ ...startBlock(name, 6), input: { command: 'view', path: '/tmp/out.txt' } }),
      kept(startBlock(name, 9)),
      kept({ ...startBlock(name, 11), input: { code: 'print(1)' } }),
      kept(startBlock(name, 14)),
      kept(startBlock(name, 16)),
      {
        type: 'tool_call',
        id: 'toolu_01ClientKode000000001',
        name: 'save_answer',
        argumentsJson: '{"answer": 42}',
      },
    ])
    // Only the client's own tool is announced.
    expect(items.filter((i) => i.type === 'tool_call_start')).toEqual([
      {
        type: 'tool_call_start',
        toolCallId: 'toolu_01ClientKode000000001',
        toolName: 'save_answer',
        responseId: 'msg_01KodeCodeExecution00001',
      },
    ])
    expect(message.stopReason).toBe('tool_use')
  })

  test('tool search and MCP connector blocks', async () => {
    const name = 'kode-server-tools-mcp-search'
    const message = await claude(name).complete(ask())
    expect(message.parts).toEqual([
      kept({ ...startBlock(name, 1), input: { pattern: 'weather' } }),
      kept(startBlock(name, 4)),
      kept({ ...startBlock(name, 6), input: { city: 'Mainz' } }),
      kept(startBlock(name, 9)),
      { type: 'text', text: 'Sunny in Mainz.' },
    ])
  })

  test('they go back to Anthropic unchanged, in place, with the client call and its result', async () => {
    const name = 'kode-server-tools-code'
    const message = await claude(name).complete(ask())
    server().enqueue(streamOf('anthropic', fixture('anthropic', 'anthropic-text')))
    const next = testClient(server(), { api: 'anthropic', model: MODEL, cacheControl: false })
    // The API refuses tool blocks without tools: the host offers the tool its code called.
    const weather = { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } }
    await next.complete({
      tools: [weather],
      messages: [
        ...ask().messages,
        message,
        {
          role: 'tool',
          id: 't1',
          createdAt: 2,
          toolCallId: 'toolu_01ClientKode000000001',
          toolName: 'save_answer',
          status: 'success',
          outputText: 'saved',
          parts: [],
        },
      ],
    })
    const body = server().requests[1]!.body as { messages: { role: string; content: unknown[] }[] }
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { ...startBlock(name, 1), input: { command: "python3 -c 'print(6*7)'" } },
        startBlock(name, 4),
        { ...startBlock(name, 6), input: { command: 'view', path: '/tmp/out.txt' } },
        startBlock(name, 9),
        { ...startBlock(name, 11), input: { code: 'print(1)' } },
        startBlock(name, 14),
        startBlock(name, 16),
        { type: 'tool_use', id: 'toolu_01ClientKode000000001', name: 'save_answer', input: { answer: 42 } },
      ],
    })
  })

  test('another api leaves them out', async () => {
    const message = await claude('kode-server-tools-web').complete(ask())
    server().enqueue(streamOf('openai-chat', fixture('openai-chat', 'openai-text')))
    await testClient(server(), { api: 'openai-chat', model: 'gpt-4o' }).complete({
      messages: [...ask().messages, message],
    })
    const body = server().requests[1]!.body as { messages: unknown[] }
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: 'Let me look that up.\n\nGutenberg built it around 1440.',
    })
  })
})

describe('content that arrives whole in message_start', () => {
  test('thinking with its signature, text, a server call and a client call, then message_stop', async () => {
    const items = await collect(claude('kode-message-start-content').stream(ask()))
    const content = JSON.parse(fixture('anthropic', 'kode-message-start-content')[0]!).message.content
    const message = doneOf(items)
    expect(message.parts).toEqual([
      { type: 'thinking_text', text: 'I will loop over the cities in code.' },
      {
        type: 'thinking_signature',
        signature: 'EuYBCkQIBxgCKkDkodeSignature',
        format: 'anthropic',
        model: MODEL,
      },
      { type: 'text', text: 'Running the batch.' },
      kept(content[2]),
      {
        type: 'tool_call',
        id: 'toolu_01PtcClientKode00001',
        name: 'get_weather',
        argumentsJson: '{"city":"Mainz"}',
        providerFields: { format: 'anthropic', fields: { caller: content[3].caller } },
      },
    ])
    expect(message).toMatchObject({
      stopReason: 'tool_use',
      rawStopReason: 'tool_use',
      responseId: 'msg_01KodeProgrammatic00001',
      usage: { inputTokens: 1500, outputTokens: 95 },
    })
    expect(items.map((i) => i.type)).toEqual(['thinking_delta', 'text_delta', 'tool_call_start', 'done'])
  })

  test('no content and no stop reason is a typed error, not an empty success', async () => {
    const error = await claude('kode-empty-message')
      .complete(ask())
      .catch((e: unknown) => e)
    expect(ProviderError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'invalid_response', retryable: false })
    expect((error as Error).message).toContain('no content and no stop reason')
  })
})

describe('programmatic tool calling: a call made by code, answered in the same container', () => {
  const PTC = 'kode-message-start-content'
  const caller = { type: 'code_execution_20250825', tool_id: 'srvtoolu_01PtcKode000000001' }
  const container = { id: 'container_011CKodePtc00001', expires_at: '2026-11-24T22:00:00Z' }

  test("the call keeps its caller, and the message the response's container", async () => {
    const message = doneOf(await collect(claude(PTC).stream(ask())))
    expect(message.parts.at(-1)).toEqual({
      type: 'tool_call',
      id: 'toolu_01PtcClientKode00001',
      name: 'get_weather',
      argumentsJson: '{"city":"Mainz"}',
      providerFields: { format: 'anthropic', fields: { caller } },
    })
    expect(message.providerFields).toEqual({ format: 'anthropic', fields: { container } })
  })

  test('a container that comes with message_delta is kept too; a call without a caller keeps nothing', async () => {
    const message = await claude('kode-server-tools-code').complete(ask())
    expect(message.providerFields).toEqual({
      format: 'anthropic',
      fields: { container: { id: 'container_011CKode000001', expires_at: '2026-11-24T22:00:00Z' } },
    })
    // This fixture's client call has no caller: nothing is kept for it.
    expect(message.parts.at(-1)).not.toHaveProperty('providerFields')
  })

  test('the next request echoes the caller (and any field Kode does not know) and names the container', async () => {
    const message = await claude(PTC).complete(ask())
    const call = message.parts.at(-1)!
    if (call.type !== 'tool_call') throw new Error('no call')
    // A field a later API version adds to tool_use blocks goes back as it came.
    call.providerFields!.fields.toolset_name = 'weather'
    server().enqueue(streamOf('anthropic', fixture('anthropic', 'anthropic-text')))
    const next = testClient(server(), { api: 'anthropic', model: MODEL, cacheControl: false })
    // The API refuses tool blocks without tools: the host offers the tool its code called.
    const weather = { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } }
    await next.complete({
      tools: [weather],
      messages: [
        ...ask().messages,
        message,
        {
          role: 'tool',
          id: 't1',
          createdAt: 2,
          toolCallId: 'toolu_01PtcClientKode00001',
          toolName: 'get_weather',
          status: 'success',
          outputText: 'sunny',
          parts: [],
        },
      ],
    })
    const content = JSON.parse(fixture('anthropic', PTC)[0]!).message.content
    expect(server().requests[1]!.rawBody).toBe(
      JSON.stringify({
        model: MODEL,
        max_tokens: 64_000,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
          {
            role: 'assistant',
            content: [
              content[0],
              { type: 'text', text: 'Running the batch.' },
              content[2],
              {
                caller,
                toolset_name: 'weather',
                type: 'tool_use',
                id: 'toolu_01PtcClientKode00001',
                name: 'get_weather',
                input: { city: 'Mainz' },
              },
            ],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_01PtcClientKode00001',
                content: [{ type: 'text', text: 'sunny' }],
              },
            ],
          },
        ],
        stream: true,
        tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } }],
        container: container.id,
      }),
    )
  })

  test('no container is named once a later response had none, nor for another format', async () => {
    const message = await claude(PTC).complete(ask())
    const answer = await claude('anthropic-text').complete(ask())
    server().enqueue(streamOf('anthropic', fixture('anthropic', 'anthropic-text')))
    await testClient(server(), { api: 'anthropic', model: MODEL }).complete({
      messages: [
        ...ask().messages,
        { ...message, parts: [{ type: 'text', text: 'Ran.' }] },
        ...ask('Again').messages,
        answer,
      ],
    })
    expect(server().requests.at(-1)!.body).not.toHaveProperty('container')
  })
})
