import type { Event } from '@kode/protocol'
import { expect } from 'vitest'
import { anthropicStream, overloadedAfterStart } from '../helpers/anthropic-wire.js'
import { call, chatStream, say } from '../helpers/chat-wire.js'
import { readFile } from '../helpers/tools.js'
import { billedRetries, cutStream, drain, record, type Scenario } from './scenario.js'

/** Provider errors and retries, the engine's and the client's. */
export const providerErrors: readonly Scenario[] = [
  [
    'a provider error before any output',
    async (h) => {
      h.server.enqueue({
        status: 400,
        body: JSON.stringify({ error: { message: 'Invalid model', type: 'invalid_request_error' } }),
      })
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      expect((await drain(agent.run('Hi'))).reason).toBe('error')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a provider error after tool results, in the next turn',
    async (h) => {
      h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }), {
        status: 400,
        body: JSON.stringify({ error: { message: 'Invalid model', type: 'invalid_request_error' } }),
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile] }), live)
      expect((await drain(agent.run('Read a'))).reason).toBe('error')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an error after output, retried',
    async (h) => {
      const text = 'The quick brown fox jumps over the lazy dog and keeps on running far away.'
      h.server.enqueue(cutStream('r1', text), chatStream({ id: 'r2', steps: [say(text)] }))
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      expect((await drain(agent.run('Tell me'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an error after output, retries run out',
    async (h) => {
      const text = 'A long answer that will be cut off before it can finish streaming to the client.'
      h.server.enqueue(cutStream('r1', text), cutStream('r2', text))
      const live: Event[] = []
      const agent = record(h.createAgent({ retry: { maxAttempts: 2, baseDelayMs: 1 } }), live)
      expect((await drain(agent.run('Go'))).reason).toBe('error')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an overloaded error after the response started, retried by the client, in a later turn',
    async (h) => {
      h.server.enqueue(
        anthropicStream('msg_1', [
          { text: 'Reading.' },
          { toolUse: { id: 'toolu_1', name: 'read_file', input: { path: 'a' } } },
        ]),
        overloadedAfterStart('msg_2', 700),
        overloadedAfterStart('msg_3', 700),
        anthropicStream('msg_4', [{ text: 'It says hi.' }]),
      )
      const live: Event[] = []
      const client = h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' })
      const agent = record(h.createAgent({ client, tools: [readFile] }), live)
      expect((await drain(agent.run('Read a'))).reason).toBe('completed')
      expect(billedRetries(await agent.history())).toBe(2)
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an overloaded error after the response started, client retries run out',
    async (h) => {
      h.server.enqueue(overloadedAfterStart('msg_1', 700), overloadedAfterStart('msg_2', 700))
      const live: Event[] = []
      const client = h.client({
        api: 'anthropic',
        model: 'claude-sonnet-4-5',
        retry: { maxAttempts: 2, baseDelayMs: 1 },
      })
      const agent = record(h.createAgent({ client }), live)
      expect((await drain(agent.run('Go'))).reason).toBe('error')
      expect(billedRetries(await agent.history())).toBe(1)
      return { sessionId: agent.sessionId, live }
    },
  ],
]
