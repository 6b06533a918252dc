import type { Event } from '@kode/protocol'
import { expect } from 'vitest'
import { call, chatStream, say, think } from '../helpers/chat-wire.js'
import { readFile } from '../helpers/tools.js'
import { drain, fails, record, type Scenario, toolsThenText } from './scenario.js'

/** The basics: text, tools, a failing tool, the turn limit, the clock. */
export const basics: readonly Scenario[] = [
  [
    'a plain text answer',
    async (h) => {
      h.server.enqueue(chatStream({ id: 'r1', steps: [think('Easy.'), say('Hello there.')] }))
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      expect((await drain(agent.run('Hi'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    "a client on a clock of its own: the responses are on the agent's",
    async (h) => {
      h.server.handle(
        toolsThenText(chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] })),
      )
      const live: Event[] = []
      // Replay times a response's events by its message's `createdAt`, live by the agent's clock.
      const agent = record(h.createAgent({ client: h.client({ now: () => 7 }), tools: [readFile] }), live)
      expect((await drain(agent.run('Read a'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'parallel tool calls',
    async (h) => {
      h.server.handle(
        toolsThenText(
          chatStream({
            id: 'r1',
            steps: [
              say('Reading.'),
              call('c1', 'read_file', { path: 'a' }),
              call('c2', 'read_file', { path: 'b' }),
            ],
          }),
        ),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile] }), live)
      expect((await drain(agent.run('Read a and b'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a failing tool and a call with invalid arguments',
    async (h) => {
      h.server.handle(
        toolsThenText(
          chatStream({ id: 'r1', steps: [call('c1', 'fails', {}), call('c2', 'read_file', { nope: 1 })] }),
        ),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile, fails] }), live)
      expect((await drain(agent.run('Try'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'max turns reached',
    async (h) => {
      let n = 0
      h.server.handle(() =>
        chatStream({ id: `r${++n}`, steps: [call(`c${n}`, 'read_file', { path: `f${n}` })] }),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile], maxTurns: 2 }), live)
      expect((await drain(agent.run('Keep reading'))).reason).toBe('max_turns')
      return { sessionId: agent.sessionId, live }
    },
  ],
]
