import type { ToolDefinition } from '@kode/protocol'
import { type LLMRequest, ProviderError } from '@kode/providers'
import type { FramedApi } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, streamOf, testClient, useServer } from './helpers.js'

// Tools the provider runs itself, declared beside the function tools of every built-in api.
const server = useServer()
const ENDS = {
  anthropic: [
    '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":1}}}',
    '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}',
    '{"type":"message_stop"}',
  ],
  google: ['{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}'],
  'openai-responses': [
    '{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}',
  ],
  'openai-chat': ['{"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}', '[DONE]'],
} satisfies Record<string, string[]>
type Api = keyof typeof ENDS
const MODELS: Record<Api, string> = {
  anthropic: 'claude-sonnet-4-5',
  google: 'gemini-2.5-flash',
  'openai-responses': 'gpt-5.1',
  'openai-chat': 'gpt-4.1',
}
const READ: ToolDefinition = {
  name: 'read',
  description: 'Read a file',
  parameters: { type: 'object', properties: {} },
}
const PROVIDER_TOOLS = {
  anthropic: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }],
  google: [{ codeExecution: {} }],
  'openai-responses': [{ type: 'web_search' }],
  'openai-chat': [{ type: 'some_gateway_tool' }],
}

async function toolsSent(api: Api, request: Partial<LLMRequest>): Promise<unknown> {
  server().enqueue(streamOf(api as FramedApi, ENDS[api]))
  await testClient(server(), { api, model: MODELS[api] }).complete({ ...ask(), ...request })
  return (server().requests.at(-1)!.body as { tools?: unknown }).tools
}

describe('providerTools', () => {
  test('anthropic: after the function tools (the cache breakpoint stays on the last of them)', async () => {
    expect(await toolsSent('anthropic', { tools: [READ], providerTools: PROVIDER_TOOLS })).toEqual([
      {
        name: 'read',
        description: 'Read a file',
        input_schema: { type: 'object', properties: {} },
        cache_control: { type: 'ephemeral' },
      },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
    ])
  })

  test('google: beside the functionDeclarations entry, or alone', async () => {
    expect(await toolsSent('google', { tools: [READ], providerTools: PROVIDER_TOOLS })).toEqual([
      {
        functionDeclarations: [
          {
            name: 'read',
            description: 'Read a file',
            parametersJsonSchema: { type: 'object', properties: {} },
          },
        ],
      },
      { codeExecution: {} },
    ])
    expect(await toolsSent('google', { providerTools: PROVIDER_TOOLS })).toEqual([{ codeExecution: {} }])
  })

  test('openai-responses and openai-chat: appended as given', async () => {
    expect(await toolsSent('openai-responses', { tools: [READ], providerTools: PROVIDER_TOOLS })).toEqual([
      {
        type: 'function',
        name: 'read',
        description: 'Read a file',
        parameters: { type: 'object', properties: {} },
        strict: false,
      },
      { type: 'web_search' },
    ])
    expect(await toolsSent('openai-chat', { providerTools: PROVIDER_TOOLS })).toEqual([
      { type: 'some_gateway_tool' },
    ])
  })

  test('anthropic: a history with tool calls and only provider tools leaves them free to run', async () => {
    // The tools the history called are declared as unavailable stand-ins, as without provider
    // tools, but with no tool_choice none, which would also keep the model from searching the web.
    const messages: LLMRequest['messages'] = [
      ...ask('Go').messages,
      {
        role: 'assistant',
        id: 'a1',
        createdAt: 2,
        parts: [{ type: 'tool_call', id: 'toolu_1', name: 'read', argumentsJson: '{}' }],
      },
      {
        role: 'tool',
        id: 't1',
        createdAt: 3,
        toolCallId: 'toolu_1',
        toolName: 'read',
        status: 'success',
        outputText: 'x',
        parts: [],
      },
      { role: 'user', id: 'u2', createdAt: 4, parts: [{ type: 'text', text: 'Now search the web' }] },
    ]
    const sent = (await toolsSent('anthropic', { messages, providerTools: PROVIDER_TOOLS })) as {
      name: string
    }[]
    expect(sent.map((tool) => tool.name)).toEqual(['read', 'web_search'])
    expect(sent.slice(1)).toEqual(PROVIDER_TOOLS.anthropic)
    expect(server().requests.at(-1)!.body).not.toHaveProperty('tool_choice')
    // A host's none now has tools to go with, and is sent.
    await toolsSent('anthropic', { messages, providerTools: PROVIDER_TOOLS, toolChoice: 'none' })
    expect((server().requests.at(-1)!.body as { tool_choice?: unknown }).tool_choice).toEqual({
      type: 'none',
    })
  })

  test('a tool choice applies to provider tools alone, except on Gemini, whose choice is of functions', async () => {
    const choiceSent = async (api: Api, toolChoice: LLMRequest['toolChoice']) => {
      await toolsSent(api, { providerTools: PROVIDER_TOOLS, toolChoice })
      return server().requests.at(-1)!.body as Record<string, unknown>
    }
    expect((await choiceSent('openai-responses', 'none')).tool_choice).toBe('none')
    expect((await choiceSent('openai-responses', 'auto')).tool_choice).toBe('auto')
    expect((await choiceSent('openai-chat', 'none')).tool_choice).toBe('none')
    expect((await choiceSent('anthropic', 'none')).tool_choice).toEqual({ type: 'none' })
    // Gemini's function calling config is refused without function declarations.
    expect(await choiceSent('google', 'none')).not.toHaveProperty('toolConfig')
    // Without provider tools for the api, `none` still means what no choice means.
    await toolsSent('openai-responses', {
      providerTools: { anthropic: PROVIDER_TOOLS.anthropic },
      toolChoice: 'none',
    })
    expect(server().requests.at(-1)!.body).not.toHaveProperty('tool_choice')
  })

  test("another api's entries and an empty list change nothing", async () => {
    expect(
      await toolsSent('google', { providerTools: { anthropic: PROVIDER_TOOLS.anthropic } }),
    ).toBeUndefined()
    expect(await toolsSent('google', { providerTools: { google: [] } })).toBeUndefined()
  })

  test('a list of anything but objects is invalid_request, and nothing is sent', async () => {
    const client = testClient(server(), { api: 'google', model: MODELS.google })
    const bad = { google: ['codeExecution'] } as unknown as LLMRequest['providerTools']
    const error = await client.complete({ ...ask(), providerTools: bad }).catch((e: unknown) => e)
    expect(ProviderError.is(error) && error.code).toBe('invalid_request')
    expect((error as Error).message).toContain('providerTools must list each tool as an object')
    expect(server().requests).toHaveLength(0)
  })
})
