import type { Message } from '@kode/protocol'
import { type LLMRequest, ProviderError } from '@kode/providers'
import { type ScriptedApi, scriptedResponse } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, testClient, useServer } from './helpers.js'
import { assistant, user } from './messages.js'

// A request's messages come from the host (a beforeModelCall hook may rewrite them): one that is
// not a message is the host's mistake, refused as `invalid_request` naming it, and nothing is
// sent. (Unknown values a provider sends are tolerated; a malformed request is not.)

const server = useServer()

const WIRES: { api: ScriptedApi; model: string }[] = [
  { api: 'openai-chat', model: 'gpt-4.1' },
  { api: 'openrouter', model: 'anthropic/claude-sonnet-4-5' },
  { api: 'anthropic', model: 'claude-sonnet-4-5' },
  { api: 'google', model: 'gemini-2.5-pro' },
  { api: 'openai-responses', model: 'gpt-5' },
]

const hi = ask().messages[0]!

/** Each malformed list, the index named and what the error says about it. */
const MALFORMED: [string, unknown[], string][] = [
  [
    'a message of an unknown role',
    [{ role: 'narrator', id: 'n1', createdAt: 1, parts: [{ type: 'text', text: 'Once' }] }],
    'request message 0 has an unknown role "narrator"',
  ],
  ['null', [null], 'request message 0 is not a message object (null)'],
  ['a message with no role, after a good one', [hi, { id: 'x', parts: [] }], 'request message 1 has no role'],
  ['a string', [hi, 'Hello'], 'request message 1 is not a message object ("Hello")'],
  [
    'a user message without parts',
    [{ role: 'user', id: 'u', createdAt: 1, content: 'Hello' }],
    'request message 0 (user) has no parts list (parts is undefined)',
  ],
  [
    'a user message with a bare string part',
    [{ role: 'user', id: 'u', createdAt: 1, parts: ['Hello'] }],
    'request message 0 (user) has a part 0 that is not a typed part ("Hello")',
  ],
  [
    'a tool result without its call id',
    [
      hi,
      { role: 'tool', id: 't', createdAt: 1, toolName: 'x', status: 'success', outputText: '', parts: [] },
    ],
    'request message 1 (tool) has no toolCallId string',
  ],
]

describe.each(WIRES)('$api: a request message that is not a message', ({ api, model }) => {
  test.each(MALFORMED)(
    '%s fails as invalid_request naming it; nothing is sent',
    async (_, messages, says) => {
      const client = testClient(server(), { api, model, retry: { maxAttempts: 3 } })
      const error = await client
        .complete({ messages: messages as Message[] })
        .then(() => undefined)
        .catch((e: unknown) => e)
      expect(ProviderError.is(error)).toBe(true)
      expect(error).toMatchObject({ code: 'invalid_request', retryable: false })
      expect((error as Error).message).toContain(says)
      expect((error as Error).message).not.toContain('could not build the request')
      expect(server().requests).toHaveLength(0)
    },
  )

  test('a malformed message appended to a history already sent is caught too; the good history still sends', async () => {
    const client = testClient(server(), { api, model })
    const history: Message[] = [user('Hi'), assistant([{ type: 'text', text: 'Hello' }]), user('More')]
    server().enqueue(scriptedResponse(api, { steps: [{ text: 'ok' }] }))
    await client.complete({ messages: history })
    const bad: LLMRequest = {
      messages: [...history, assistant([{ type: 'text', text: 'Sure' }]), { role: 'narrator' } as never],
    }
    await expect(client.complete(bad)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('request message 4 has an unknown role "narrator"'),
    })
    expect(server().requests).toHaveLength(1)
    server().enqueue(scriptedResponse(api, { steps: [{ text: 'ok' }] }))
    await client.complete({ messages: [...history, assistant([{ type: 'text', text: 'Sure' }]), user('Go')] })
    expect(server().requests).toHaveLength(2)
  })
})
