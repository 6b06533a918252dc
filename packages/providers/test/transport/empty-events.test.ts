import { type ScriptedApi, scriptedResponse } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, testClient, useServer } from '../helpers.js'

// Proxies and some compatible servers keep a connection alive with events that carry no data
// (`data:` or `data: ` and a blank line, sometimes named, as `event: ping`). Such an event holds
// nothing to map: it is skipped like a comment, never parsed as JSON.

const server = useServer()
const STEPS = [
  { text: 'Reading the file now.' },
  { toolCall: { id: 'call_1', name: 'read', arguments: { path: 'a.txt' } } },
]
const KEEP_ALIVES = ['data:\n\n', 'data: \n\n', 'event: ping\ndata:\r\n\r\n', 'data:  \n\n']

describe.each([
  'anthropic',
  'openai-chat',
  'openrouter',
  'google',
  'openai-responses',
] as const satisfies readonly ScriptedApi[])('%s', (api) => {
  test('events with empty data between and around the real ones are ignored', async () => {
    const script = { id: 'r1', steps: STEPS, usage: { inputTokens: 7, outputTokens: 3 } }
    const plain = scriptedResponse(api, script)
    const frames = plain.body as string[]
    const padded = frames.flatMap((frame, i) => [KEEP_ALIVES[i % KEEP_ALIVES.length]!, frame])
    server().enqueue(plain, { ...plain, body: [...padded, 'data:\n\n'] })
    const client = testClient(server(), { api, model: 'm', retry: { maxAttempts: 1 } })
    const expected = await client.complete(ask())
    const message = await testClient(server(), { api, model: 'm', retry: { maxAttempts: 1 } }).complete(ask())
    expect(message).toEqual(expected)
    expect(message.parts.find((p) => p.type === 'text')).toMatchObject({ text: 'Reading the file now.' })
    expect(message.stopReason).toBe('tool_use')
  })
})
