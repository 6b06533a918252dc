import type { AssistantMessage } from '@kode/protocol'
import { type ScriptedApi, scriptedResponse } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { testClient, useServer } from './helpers.js'

const server = useServer()

function withoutItemId(part: object): object {
  const { itemId: _itemId, ...rest } = part as { itemId?: string }
  return rest
}
const STEPS = [
  { thinking: 'Plan the call.' },
  { text: 'Reading the file now.' },
  { toolCall: { id: 'call_1', name: 'read', arguments: { path: 'a.txt' } } },
]

describe.each([
  'anthropic',
  'openai-chat',
  'openrouter',
  'google',
  'openai-responses',
] as const satisfies readonly ScriptedApi[])('scriptedResponse on %s', (api) => {
  test("a client reads the script back from the api's own wire format", async () => {
    server().enqueue(
      scriptedResponse(api, { id: 'r1', steps: STEPS, usage: { inputTokens: 7, outputTokens: 3 } }),
    )
    const message: AssistantMessage = await testClient(server(), { api, model: 'm' }).complete({
      messages: [{ role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Go' }] }],
    })
    // OpenAI Responses also keeps each item's id (`itemId`), which the other apis have none of;
    // Gemini's call id is also kept apart from Kode's, to go back to Gemini.
    const geminiId =
      api === 'google' ? { providerFields: { format: 'google', fields: { id: 'call_1' } } } : {}
    expect(message.parts.filter((p) => p.type !== 'thinking_signature').map(withoutItemId)).toEqual([
      { type: 'thinking_text', text: 'Plan the call.' },
      { type: 'text', text: 'Reading the file now.' },
      { type: 'tool_call', id: 'call_1', name: 'read', argumentsJson: '{"path":"a.txt"}', ...geminiId },
    ])
    expect(message).toMatchObject({
      responseId: 'r1',
      stopReason: 'tool_use',
      usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
    })
  })

  test('a stalled script sends its first steps and then hangs without ending the response', () => {
    const response = scriptedResponse(api, { steps: STEPS, stallAfter: 2 })
    const body = (response.body as string[]).join('')
    expect(response.stallAfterBytes).toBe(Buffer.byteLength(body))
    expect(body).toContain('Reading')
    expect(body).not.toContain('call_1')
    expect(body).not.toMatch(/message_stop|\[DONE\]|finish_reason":"|finishReason|response\.completed/)
  })
})

const USER = [
  { role: 'user' as const, id: 'u1', createdAt: 1, parts: [{ type: 'text' as const, text: 'Go' }] },
]

describe('scriptedResponse on google', () => {
  test('frames each piece as a GenerateContentResponse chunk, CRLF-terminated, the last with the finish', () => {
    const { body } = scriptedResponse('google', {
      id: 'r1',
      model: 'gemini-2.5-flash',
      steps: [{ text: 'Hi there' }],
      usage: { inputTokens: 4, outputTokens: 2 },
    })
    const usage = '"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"totalTokenCount":6}'
    const tail = '"modelVersion":"gemini-2.5-flash","responseId":"r1"'
    expect(body).toEqual([
      `data: {"candidates":[{"content":{"parts":[{"text":"Hi "}],"role":"model"},"index":0}],${usage},${tail}}\r\n\r\n`,
      `data: {"candidates":[{"content":{"parts":[{"text":"there"}],"role":"model"},"finishReason":"STOP","index":0}],${usage},${tail}}\r\n\r\n`,
    ])
  })

  test('a signed thought, an inline image and a call without arguments read back through the adapter', async () => {
    server().enqueue(
      scriptedResponse('google', {
        id: 'r2',
        steps: [
          { thinking: 'Look first.', signature: 'sig-1' },
          { image: 'data:image/png;base64,iVBORw0KGgo=' },
          { toolCall: { id: 'call_9', name: 'look', arguments: '{}' } },
        ],
      }),
    )
    const message = await testClient(server(), { api: 'google', model: 'gemini-2.5-flash' }).complete({
      messages: USER,
    })
    expect(message.parts).toEqual([
      { type: 'thinking_text', text: 'Look first.' },
      { type: 'thinking_signature', signature: 'sig-1', format: 'google', model: 'gemini-2.5-flash' },
      { type: 'image_url', url: 'data:image/png;base64,iVBORw0KGgo=' },
      {
        type: 'tool_call',
        id: 'call_9',
        name: 'look',
        argumentsJson: '{}',
        providerFields: { format: 'google', fields: { id: 'call_9' } },
      },
    ])
    expect(message.rawStopReason).toBe('STOP')
  })

  test('refuses what Gemini cannot send: arguments that are not an object, an image by URL', () => {
    expect(() =>
      scriptedResponse('google', { steps: [{ toolCall: { id: 'c', name: 'n', arguments: '[1]' } }] }),
    ).toThrow(TypeError)
    expect(() => scriptedResponse('google', { steps: [{ image: 'https://example.com/a.png' }] })).toThrow(
      TypeError,
    )
  })
})

describe('scriptedResponse on openai-responses', () => {
  test('numbers its events and frames each with its type as the SSE event name', () => {
    const { body } = scriptedResponse('openai-responses', { id: 'r1', steps: [{ text: 'Hi' }] })
    const frames = body as string[]
    expect(frames.map((frame) => frame.split('\n')[0])).toEqual([
      'event: response.created',
      'event: response.in_progress',
      'event: response.output_item.added',
      'event: response.content_part.added',
      'event: response.output_text.delta',
      'event: response.output_text.done',
      'event: response.content_part.done',
      'event: response.output_item.done',
      'event: response.completed',
    ])
    expect(frames[4]).toBe(
      'event: response.output_text.delta\n' +
        'data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_scripted_0","output_index":0,"content_index":0,"delta":"Hi","logprobs":[]}\n\n',
    )
  })

  test('encrypted reasoning and the item ids round-trip; another stop ends as response.incomplete', async () => {
    server().enqueue(
      scriptedResponse('openai-responses', {
        id: 'r3',
        steps: [{ thinking: 'Think.', signature: 'enc-1' }, { text: 'Cut' }],
        stop: 'max_output_tokens',
      }),
    )
    const message = await testClient(server(), { api: 'openai-responses', model: 'gpt-5' }).complete({
      messages: USER,
    })
    expect(message.parts).toEqual([
      { type: 'thinking_text', text: 'Think.' },
      {
        type: 'thinking_signature',
        signature: 'enc-1',
        format: 'openai-responses',
        model: 'gpt-5',
        itemId: 'rs_scripted_0',
      },
      { type: 'text', text: 'Cut', itemId: 'msg_scripted_1' },
    ])
    expect(message).toMatchObject({
      responseId: 'r3',
      stopReason: 'length',
      rawStopReason: 'max_output_tokens',
    })
  })
})
