import { defineTool } from '@kode/core'
import type { Event } from '@kode/protocol'
import { scriptedResponse } from '@kode/providers/testing'
import { Type } from '@sinclair/typebox'
import { expect } from 'vitest'
import { call, chatStream, say, stalledChatStream, textReply, think } from '../helpers/chat-wire.js'
import { gate } from '../helpers/harness.js'
import { readFile } from '../helpers/tools.js'
import { drain, needsOk, record, type Scenario, toolsThenText } from './scenario.js'

/** Interrupts at every stage of a task. */
export const aborts: readonly Scenario[] = [
  [
    'an abort before the run starts',
    async (h) => {
      h.server.handle(() => textReply('r2', 'Back.'))
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      expect((await drain(agent.run('never mind', { signal: AbortSignal.abort() }))).reason).toBe('aborted')
      expect((await drain(agent.run('again'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort before any output (the request in flight)',
    async (h) => {
      h.server.enqueue(stalledChatStream({ id: 'r1', steps: [] }), textReply('r2', 'Back.'))
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      const controller = new AbortController()
      agent.events.on('turn_start', () => controller.abort())
      expect((await drain(agent.run('Hi', { signal: controller.signal }))).reason).toBe('aborted')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort before the output of a later turn',
    async (h) => {
      h.server.enqueue(
        chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }),
        stalledChatStream({ id: 'r2', steps: [] }),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile] }), live)
      const controller = new AbortController()
      let turns = 0
      agent.events.on('turn_start', () => {
        if (++turns === 2) controller.abort()
      })
      expect((await drain(agent.run('Read a', { signal: controller.signal }))).reason).toBe('aborted')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort while streaming',
    async (h) => {
      h.server.enqueue(
        chatStream(
          { id: 'r1', steps: [think('Thinking hard about this.'), say('Partial answer that goes on.')] },
          { chunkDelayMs: 1 },
        ),
        textReply('r2', 'Back.'),
      )
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      const controller = new AbortController()
      const stop = () => controller.abort()
      agent.events.on('assistant_text_delta', stop)
      expect((await drain(agent.run('q', { signal: controller.signal }))).reason).toBe('aborted')
      agent.events.off('assistant_text_delta', stop)
      expect((await drain(agent.run('again'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort while streaming, after the provider reported usage',
    async (h) => {
      // Anthropic reports the input tokens as the message starts: the partial response has usage.
      h.server.enqueue(
        scriptedResponse('anthropic', {
          id: 'msg_1',
          model: 'claude-sonnet-4-5',
          steps: [{ text: 'Partial answer that goes on.' }],
          stallAfter: 1,
        }),
      )
      const live: Event[] = []
      const agent = record(
        h.createAgent({ client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }) }),
        live,
      )
      const controller = new AbortController()
      agent.events.on('assistant_text_delta', () => controller.abort())
      expect((await drain(agent.run('q', { signal: controller.signal }))).reason).toBe('aborted')
      expect(live.filter((e) => e.type === 'usage')).toHaveLength(1)
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort during a tool call',
    async (h) => {
      const started = gate()
      const hang = defineTool({
        name: 'hang',
        description: 'Runs until interrupted',
        parameters: Type.Object({}),
        execute: () => {
          started.open()
          return new Promise<string>(() => {})
        },
      })
      h.server.enqueue(
        chatStream({ id: 'r1', steps: [say('Working.'), call('c1', 'hang', {}), call('c2', 'hang', {})] }),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [hang] }), live)
      const controller = new AbortController()
      const run = agent.run('go', { signal: controller.signal })
      void started.promise.then(() => controller.abort())
      expect((await drain(run)).reason).toBe('aborted')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort right after a call reported progress, before the next call started',
    async (h) => {
      const controller = new AbortController()
      // Reports, then interrupts the task before its progress is persisted and before the next
      // call starts: that call is announced live where the replay announces it, before the record.
      const report = defineTool({
        name: 'report',
        description: 'Reports, then runs until interrupted',
        parameters: Type.Object({}),
        execute: (_args, ctx) => {
          ctx.progress('half way')
          controller.abort()
          return new Promise<string>(() => {})
        },
      })
      h.server.enqueue(
        chatStream({ id: 'r1', steps: [call('c1', 'report', {}), call('c2', 'read_file', { path: 'a' })] }),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [report, readFile] }), live)
      expect((await drain(agent.run('go', { signal: controller.signal }))).reason).toBe('aborted')
      expect(live.filter((e) => e.type === 'tool_progress')).toHaveLength(1)
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    "an abort on the last running call's result, while a later call waits for approval",
    async (h) => {
      h.server.enqueue(
        chatStream({
          id: 'r1',
          steps: [call('c1', 'read_file', { path: 'a' }), call('c2', 'write_file', { path: 'a' })],
        }),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile, needsOk] }), live)
      const controller = new AbortController()
      // c1's result is the turn's last (c2 waits for the user): nothing runs once it is out.
      agent.events.on('tool_result', () => controller.abort())
      const outcome = await drain(agent.run('Read a, write a', { signal: controller.signal }))
      expect(outcome.reason).toBe('awaiting_approval')
      expect(live.filter((e) => e.type === 'tool_result').map((e) => e.toolCallId)).toEqual(['c1'])
      return { sessionId: agent.sessionId, live }
    },
  ],
  ...(['approved', 'denied'] as const).map(
    (decision): Scenario => [
      `an approval requested, then ${decision}`,
      async (h) => {
        h.server.handle(
          toolsThenText(
            chatStream({
              id: 'r1',
              steps: [
                say('On it.'),
                call('c1', 'write_file', { path: 'a' }),
                call('c2', 'read_file', { path: 'b' }),
              ],
            }),
          ),
        )
        const live: Event[] = []
        const agent = record(h.createAgent({ tools: [needsOk, readFile] }), live)
        expect((await drain(agent.run('Write a, read b'))).reason).toBe('awaiting_approval')
        const approvals = [{ toolCallId: 'c1', approved: decision === 'approved' }]
        expect((await drain(agent.continue({ approvals }))).reason).toBe('completed')
        return { sessionId: agent.sessionId, live }
      },
    ],
  ),
]
