import type { Event } from '@kode/protocol'
import { Type } from '@sinclair/typebox'
import { expect } from 'vitest'
import { call, chatStream, textReply } from '../helpers/chat-wire.js'
import { readFile } from '../helpers/tools.js'
import { drain, needsOk, record, type Scenario, toolsThenText } from './scenario.js'

/** Approvals across a restart, steering, structured output. */
export const hostControls: readonly Scenario[] = [
  [
    'an approval requested, then approved by a new agent after a restart',
    async (h) => {
      h.server.handle(
        toolsThenText(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a' })] })),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [needsOk] }), live)
      expect((await drain(agent.run('Write a'))).reason).toBe('awaiting_approval')
      const later = record(
        h.createAgent({ store: h.reopenStore(), sessionId: agent.sessionId, tools: [needsOk] }),
        live,
      )
      const approvals = [{ toolCallId: 'c1', approved: true }]
      expect((await drain(later.continue({ approvals }))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an interrupt as a call asks for approval, before the calls beside it start',
    async (h) => {
      h.server.enqueue(
        chatStream({
          id: 'r1',
          steps: [
            call('c1', 'read_file', { path: 'a' }),
            call('c2', 'write_file', { path: 'a' }),
            call('c3', 'read_file', { path: 'b' }),
          ],
        }),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile, needsOk] }), live)
      const controller = new AbortController()
      agent.events.on('tool_approval_request', () => controller.abort())
      expect((await drain(agent.run('Write a', { signal: controller.signal }))).reason).toBe('aborted')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'two decisions on a restart, the continue interrupted at the first',
    async (h) => {
      h.server.enqueue(
        chatStream({
          id: 'r1',
          steps: [call('c1', 'write_file', { path: 'a' }), call('c2', 'write_file', { path: 'b' })],
        }),
        textReply('r2', 'Stopped.'),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [needsOk] }), live)
      expect((await drain(agent.run('Write a and b'))).reason).toBe('awaiting_approval')
      const later = record(
        h.createAgent({ store: h.reopenStore(), sessionId: agent.sessionId, tools: [needsOk] }),
        live,
      )
      const controller = new AbortController()
      later.events.once('tool_approval_decision', () => controller.abort())
      const approvals = [
        { toolCallId: 'c1', approved: true },
        { toolCallId: 'c2', approved: false },
      ]
      const run = later.continue({ approvals }, { signal: controller.signal })
      expect((await drain(run)).reason).toBe('aborted')
      expect((await drain(later.run('Why?'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'steering during a tool and while the model answers',
    async (h) => {
      h.server.enqueue(
        chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }),
        textReply('r2', 'Read a.'),
        textReply('r3', 'Lu a.'),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile] }), live)
      let steered = 0
      agent.events.on('tool_call', () => {
        if (steered++ === 0) agent.steer('Also look at b.')
      })
      agent.events.on('assistant_text_delta', () => {
        if (steered++ === 1) agent.steer('Say it in French too.')
      })
      expect((await drain(agent.run('Read a'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'structured output with a correction',
    async (h) => {
      h.server.enqueue(textReply('r1', '{"city":"Oslo"}'), textReply('r2', '{"city":"Oslo","celsius":4}'))
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      const Weather = Type.Object(
        { city: Type.String(), celsius: Type.Number() },
        { additionalProperties: false },
      )
      expect((await drain(agent.run('Weather in Oslo?', { output: Weather }))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
]
