import type { AssistantMessage } from '@kode/protocol'
import { type ScriptedApi, scriptedResponse } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { testClient, useServer } from './helpers.js'

const server = useServer()
const STEPS = [
  { thinking: 'Plan the call.' },
  { text: 'Reading the file now.' },
  { toolCall: { id: 'call_1', name: 'read', arguments: { path: 'a.txt' } } },
]

describe.each(['anthropic', 'openai-chat', 'openrouter'] as const satisfies readonly ScriptedApi[])(
  'scriptedResponse on %s',
  (api) => {
    test("a client reads the script back from the api's own wire format", async () => {
      server().enqueue(
        scriptedResponse(api, { id: 'r1', steps: STEPS, usage: { inputTokens: 7, outputTokens: 3 } }),
      )
      const message: AssistantMessage = await testClient(server(), { api, model: 'm' }).complete({
        messages: [{ role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Go' }] }],
      })
      expect(message.parts.filter((p) => p.type !== 'thinking_signature')).toEqual([
        { type: 'thinking_text', text: 'Plan the call.' },
        { type: 'text', text: 'Reading the file now.' },
        { type: 'tool_call', id: 'call_1', name: 'read', argumentsJson: '{"path":"a.txt"}' },
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
      expect(body).not.toMatch(/message_stop|\[DONE\]|finish_reason":"/)
    })
  },
)
