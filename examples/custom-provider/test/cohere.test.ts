import { fileURLToPath } from 'node:url'
import { createClient } from '@kode/providers'
import {
  type ConformanceCase,
  createSseTestServer,
  frameTyped,
  readChunksFile,
  runProviderConformance,
} from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { cohere, registerCohere } from '../src/index.js'

const framesOf = (name: string) =>
  frameTyped(readChunksFile(fileURLToPath(new URL(`./fixtures/${name}.chunks.txt`, import.meta.url))))

const CASES: ConformanceCase[] = [
  {
    name: 'text',
    frames: framesOf('cohere-text'),
    expect: { text: 'Bonjour, ça va ?', stopReason: 'stop', usage: { inputTokens: 72, outputTokens: 5 } },
  },
  {
    name: 'tool plan and a tool call',
    frames: framesOf('cohere-tool-call'),
    expect: {
      stopReason: 'tool_use',
      toolCalls: [{ name: 'get_weather', argumentsJson: '{"city": "Paris"}' }],
    },
  },
  {
    name: 'thinking, text, a citation, cut by max tokens',
    frames: framesOf('cohere-thinking'),
    expect: { text: '4', stopReason: 'length', rawStopReason: 'MAX_TOKENS' },
  },
  {
    name: 'a finish reason Kode has no word for, no usage',
    frames: framesOf('cohere-new-finish'),
    expect: { stopReason: null, rawStopReason: 'SOMETHING_NEW' },
  },
]

describe('cohere plugin', () => {
  test('meets the provider contract', async () => {
    // The unknown-event check models a new event on these frames: `event: kode_unknown` with
    // `{"type":"kode_unknown"}`. Pass `unknownEvent` to use a frame of your own instead.
    const report = await runProviderConformance(cohere, CASES, { api: 'cohere', model: 'command-a-03-2025' })
    expect(report.failures).toEqual([])
    expect(report.notRun).toEqual([])
  }, 30_000)

  test('once registered, createClient posts Cohere requests and builds the message', async () => {
    registerCohere('cohere-example')
    const server = await createSseTestServer()
    try {
      server.enqueue({ body: framesOf('cohere-tool-call') })
      const client = createClient({
        api: 'cohere-example',
        model: 'command-a-03-2025',
        apiKey: 'co-test-key-0123456789',
        baseUrl: server.url,
        now: () => 5,
        createId: () => 'm1',
      })
      const message = await client.complete({
        system: 'Be brief.',
        messages: [
          { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Weather in Paris?' }] },
        ],
        tools: [{ name: 'get_weather', description: 'Weather by city', parameters: { type: 'object' } }],
      })
      const request = server.requests[0]!
      expect(request.url).toBe('/chat')
      expect(request.headers.authorization).toBe('Bearer co-test-key-0123456789')
      expect(request.body).toEqual({
        model: 'command-a-03-2025',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        ],
        stream: true,
        tools: [
          {
            type: 'function',
            function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object' } },
          },
        ],
      })
      expect(message).toEqual({
        role: 'assistant',
        id: 'm1',
        createdAt: 5,
        parts: [
          { type: 'thinking_text', text: 'I will look up the weather.' },
          {
            type: 'tool_call',
            id: 'get_weather_a1b2',
            name: 'get_weather',
            argumentsJson: '{"city": "Paris"}',
          },
        ],
        usage: { inputTokens: 900, outputTokens: 40, totalTokens: 940 },
        stopReason: 'tool_use',
        rawStopReason: 'TOOL_CALL',
        responseId: 'c0a2',
        model: 'command-a-03-2025',
        provider: 'cohere-example',
        api: 'cohere-example',
        durationMs: 0,
      })
    } finally {
      await server.close()
    }
  })

  test("the plugin's own typed option, apiOptions.cohere, reaches the request body", async () => {
    registerCohere('cohere-options')
    const server = await createSseTestServer()
    try {
      server.enqueue({ body: framesOf('cohere-text') })
      const client = createClient({
        api: 'cohere-options',
        model: 'command-a-03-2025',
        baseUrl: server.url,
        apiOptions: { cohere: { safetyMode: 'STRICT' } },
      })
      await client.complete({
        messages: [{ role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Hi' }] }],
      })
      expect(server.requests[0]!.body).toMatchObject({ safety_mode: 'STRICT' })
    } finally {
      await server.close()
    }
  })

  test('a named tool choice forces a call of that tool: only it is offered, and a call is required', async () => {
    // Cohere's tool_choice has no tool name (REQUIRED or NONE): ignoring the name would let the
    // model answer in text or call another tool.
    registerCohere('cohere-named-choice')
    const server = await createSseTestServer()
    try {
      server.enqueue({ body: framesOf('cohere-tool-call') })
      const client = createClient({
        api: 'cohere-named-choice',
        model: 'command-a-03-2025',
        baseUrl: server.url,
      })
      const tool = (name: string) => ({ name, description: name, parameters: { type: 'object' } })
      await client.complete({
        messages: [{ role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Hi' }] }],
        tools: [tool('get_time'), tool('get_weather')],
        toolChoice: { name: 'get_weather' },
      })
      const body = server.requests[0]!.body as {
        tools: { function: { name: string } }[]
        tool_choice?: string
      }
      expect(body.tools.map((t) => t.function.name)).toEqual(['get_weather'])
      expect(body.tool_choice).toBe('REQUIRED')
    } finally {
      await server.close()
    }
  })
})
