import { defineSubAgent, defineTool, pendingApprovals } from '@kode/core'
import type { Event } from '@kode/protocol'
import { exportSessionHtml } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { expect } from 'vitest'
import { call, chatStream, say, stalledChatStream, textReply } from '../helpers/chat-wire.js'
import { collect } from '../helpers/harness.js'
import { readFile } from '../helpers/tools.js'
import { drain, messagesOf, needsOk, record, researcher, type Scenario } from './scenario.js'

/** Runs two researchers, one after the other, without linking them itself; answers with their texts. */
const fanOut = defineTool({
  name: 'fan_out',
  description: 'Runs two researchers, one after the other',
  parameters: Type.Object({}),
  execute: async (_args, ctx) => {
    const spec = { name: 'researcher', system: 'You research.' }
    const first = await ctx.runSubAgent(spec, 'first')
    const second = await ctx.runSubAgent(spec, 'second')
    return `${first.text} ${second.text}`
  },
})

/** A writer whose write_file call needs approval. */
const writer = defineSubAgent({
  name: 'writer',
  description: 'Writes',
  system: 'You write.',
  tools: [needsOk],
})

/** The parent calls `tool` (p1); the writer writes a.txt and answers with the tool's result. */
function writerRoute(tool: string, args: Record<string, string> = {}) {
  return (request: Parameters<typeof messagesOf>[0]) => {
    const messages = messagesOf(request)
    const last = messages.at(-1)!
    if (messages[0]?.content === 'You write.') {
      if (last.role === 'tool') return textReply('r-child-2', `Writer: ${String(last.content)}`)
      return chatStream({ id: 'r-child-1', steps: [call('w1', 'write_file', { path: 'a.txt' })] })
    }
    if (messages[0]?.content === 'You manage.') {
      if (last.role === 'tool') return textReply('r-manager-2', `Manager: ${String(last.content)}`)
      return chatStream({ id: 'r-manager-1', steps: [call('m1', 'writer', { prompt: 'Write' })] })
    }
    if (last.role === 'tool') return textReply('r-parent-2', `Parent: ${String(last.content)}`)
    if (last.content === 'Again?') return textReply('r-parent-3', 'Back.')
    return chatStream({ id: 'r-parent-1', steps: [call('p1', tool, args)] })
  }
}

/** A manager whose writer's write_file call needs approval. */
const manager = defineSubAgent({
  name: 'manager',
  description: 'Manages',
  system: 'You manage.',
  tools: [writer],
})

/** Sub-agents: alone, stopped, several in one call, at the same time, paused and not carried on. */
export const subAgents: readonly Scenario[] = [
  ...([writer, manager] as const).map(
    (top): Scenario => [
      `a ${top.name === 'writer' ? 'sub-agent' : 'sub-agent two levels down'} paused for approval, its parent continued under an interrupt before the call ran`,
      async (h) => {
        h.server.handle(writerRoute(top.name, { prompt: 'Write' }))
        const live: Event[] = []
        const agent = record(h.createAgent({ tools: [top] }), live)
        expect((await drain(agent.run('Please write'))).reason).toBe('awaiting_approval')
        const stopped = new AbortController()
        stopped.abort()
        const approvals = [{ toolCallId: 'w1', approved: true }]
        expect((await drain(agent.continue({ approvals }, { signal: stopped.signal }))).reason).toBe(
          'aborted',
        )
        expect((await drain(agent.run('Again?'))).reason).toBe('completed')
        // No session is left with a pending call: each sub-agent's was answered.
        for (const id of new Set(live.map((e) => e.sessionId)))
          expect(pendingApprovals(await h.store.read(id))).toEqual([])
        return { sessionId: agent.sessionId, live }
      },
    ],
  ),
  [
    'two sub-agents of one call paused for approval, the parent continued under an interrupt',
    async (h) => {
      h.server.handle(writerRoute('write_twice'))
      const spec = { name: 'writer', system: 'You write.', tools: [needsOk] }
      const twice = defineTool({
        name: 'write_twice',
        description: 'Runs two writers, one after the other',
        parameters: Type.Object({}),
        execute: async (_args, ctx) => {
          const first = await ctx.runSubAgent(spec, 'first')
          const second = await ctx.runSubAgent(spec, 'second')
          return `${first.text} ${second.text}`
        },
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [twice] }), live)
      const paused = await collect(agent.run('Please write twice'))
      expect(paused.outcome.pendingApprovals).toHaveLength(2)
      const stopped = new AbortController()
      stopped.abort()
      const approvals = (paused.outcome.pendingApprovals ?? []).map((p) => ({
        toolCallId: p.toolCallId,
        sessionId: p.sessionId,
        approved: true,
      }))
      expect((await drain(agent.continue({ approvals }, { signal: stopped.signal }))).reason).toBe('aborted')
      for (const id of new Set(live.map((e) => e.sessionId)))
        expect(pendingApprovals(await h.store.read(id))).toEqual([])
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a sub-agent paused for approval that its call, run again, does not carry on',
    async (h) => {
      h.server.handle(writerRoute('once'))
      let runs = 0
      const once = defineTool({
        name: 'once',
        description: 'Runs the writer the first time only',
        parameters: Type.Object({}),
        execute: async (_args, ctx) => {
          if (runs++ > 0) return 'Not again.'
          return (await ctx.runSubAgent({ name: 'writer', system: 'You write.', tools: [needsOk] }, 'Write'))
            .text
        },
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [once] }), live)
      expect((await drain(agent.run('Please write'))).reason).toBe('awaiting_approval')
      const approvals = [{ toolCallId: 'w1', approved: false, reason: 'no' }]
      expect((await drain(agent.continue({ approvals }))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a sub-agent',
    async (h) => {
      h.server.handle((request) => {
        const messages = messagesOf(request)
        const last = messages.at(-1)!
        if (messages[0]?.content === 'You research.') {
          if (last.role === 'tool') return textReply('r-child-2', 'a says hi')
          return chatStream({ id: 'r-child-1', steps: [call('k1', 'read_file', { path: 'a' })] })
        }
        if (last.role === 'tool') return textReply('r-parent-2', 'The researcher says hi.')
        return chatStream({ id: 'r-parent-1', steps: [call('p1', 'researcher', { prompt: 'Read a' })] })
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [researcher] }), live)
      expect((await drain(agent.run('Ask the researcher'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a sub-agent stopped at its time limit',
    async (h) => {
      const slow = defineSubAgent({
        name: 'slow',
        description: 'Reports, slowly',
        system: 'You report.',
        timeoutMs: 300,
      })
      h.server.handle((request) => {
        const messages = messagesOf(request)
        if (messages[0]?.content === 'You report.')
          return stalledChatStream({ id: 'r-child', steps: [say('Reporting')] })
        if (messages.at(-1)!.role === 'tool') return textReply('r-parent-2', 'It took too long.')
        return chatStream({ id: 'r-parent-1', steps: [call('p1', 'slow', { prompt: 'cats' })] })
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [slow] }), live)
      expect((await drain(agent.run('Report on cats'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  ...(['streams', 'runs a tool'] as const).map(
    (when): Scenario => [
      `a sub-agent interrupted by the user while it ${when}`,
      async (h) => {
        h.server.handle((request) => {
          const messages = messagesOf(request)
          if (messages[0]?.content === 'You research.') {
            if (when === 'streams') return stalledChatStream({ id: 'r-child', steps: [say('Looking')] })
            return chatStream({ id: 'r-child', steps: [call('k1', 'hang', {})] })
          }
          if (messages.at(-1)?.content === 'Again?') return textReply('r-parent-2', 'Back.')
          return chatStream({ id: 'r-parent-1', steps: [call('p1', 'researcher', { prompt: 'Read a' })] })
        })
        const hang = defineTool({
          name: 'hang',
          description: 'Runs until interrupted',
          parameters: Type.Object({}),
          execute: () => new Promise<string>(() => {}),
        })
        const child = defineSubAgent({
          name: 'researcher',
          description: 'Researches',
          system: 'You research.',
          tools: [hang],
        })
        const live: Event[] = []
        const agent = record(h.createAgent({ tools: [child] }), live)
        const controller = new AbortController()
        const trigger = when === 'streams' ? 'assistant_text_delta' : 'tool_call'
        const stop = (event: Event) => {
          if (event.sessionId !== agent.sessionId && event.type === trigger) controller.abort()
        }
        agent.events.on('event', stop)
        expect((await drain(agent.run('Ask the researcher', { signal: controller.signal }))).reason).toBe(
          'aborted',
        )
        agent.events.off('event', stop)
        expect((await drain(agent.run('Again?'))).reason).toBe('completed')
        return { sessionId: agent.sessionId, live }
      },
    ],
  ),
  [
    'a call that ran two sub-agents, interrupted in the second',
    async (h) => {
      h.server.handle((request) => {
        const messages = messagesOf(request)
        if (messages[0]?.content === 'You research.') {
          if (messages[1]?.content === 'first') return textReply('r-child-1', 'First done.')
          return stalledChatStream({ id: 'r-child-2', steps: [say('Looking')] })
        }
        if (messages.at(-1)?.content === 'Again?') return textReply('r-parent-2', 'Back.')
        return chatStream({ id: 'r-parent-1', steps: [call('p1', 'fan_out', {})] })
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [fanOut] }), live)
      const controller = new AbortController()
      const started: string[] = []
      const stop = (event: Event) => {
        if (event.type === 'task_start' && event.subAgentState) started.push(event.sessionId)
        if (event.sessionId === started[1] && event.type === 'assistant_text_delta') controller.abort()
      }
      agent.events.on('event', stop)
      expect((await drain(agent.run('Ask twice', { signal: controller.signal }))).reason).toBe('aborted')
      agent.events.off('event', stop)
      const children = live.filter((e) => e.type === 'task_start' && e.subAgentState).map((e) => e.sessionId)
      expect(children).toHaveLength(2)
      expect(live.find((e) => e.type === 'tool_result' && e.sessionId === agent.sessionId)).toMatchObject({
        uiExtra: { type: 'session', sessionId: children[0], moreSessionIds: [children[1]] },
      })
      // The export nests both under the call, in the order they started, batched or not.
      for (const batchSize of [undefined, 1]) {
        const page = await exportSessionHtml(h.store, agent.sessionId, { batchSize })
        const nested = children.map((id) => page.indexOf(`Sub-agent session <code>${id}</code>`))
        expect(nested[0]).toBeGreaterThan(-1)
        expect(nested[1]).toBeGreaterThan(nested[0]!)
      }
      expect((await drain(agent.run('Again?'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a custom tool that ran two sub-agents and returned without linking them',
    async (h) => {
      h.server.handle((request) => {
        const messages = messagesOf(request)
        if (messages[0]?.content === 'You research.') {
          return textReply(`r-child-${String(messages[1]?.content)}`, `${String(messages[1]?.content)} done.`)
        }
        if (messages.at(-1)?.role === 'tool') return textReply('r-parent-2', 'Both done.')
        return chatStream({ id: 'r-parent-1', steps: [call('p1', 'fan_out', {})] })
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [fanOut] }), live)
      expect((await drain(agent.run('Ask twice'))).reason).toBe('completed')
      const children = live.filter((e) => e.type === 'task_start' && e.subAgentState).map((e) => e.sessionId)
      expect(children).toHaveLength(2)
      // The engine linked both, in the order they started, with the first one's accounting.
      expect(live.find((e) => e.type === 'tool_result' && e.sessionId === agent.sessionId)).toMatchObject({
        status: 'success',
        uiExtra: { type: 'session', sessionId: children[0], moreSessionIds: [children[1]] },
        taskMetadata: { sessionId: children[0] },
      })
      return { sessionId: agent.sessionId, live }
    },
  ],
  ...(['one call', 'sibling calls'] as const).map(
    (of): Scenario => [
      `sub-agents of ${of} that ran at the same time`,
      async (h) => {
        h.server.handle((request) => {
          const messages = messagesOf(request)
          if (messages[0]?.content === 'You research.') {
            const topic = String(messages[1]?.content)
            const steps =
              messages.at(-1)?.role === 'tool'
                ? [say(`Report on ${topic}.`)]
                : [call(`k-${topic}`, 'read_file', { path: topic })]
            return chatStream({ id: `r-${topic}-${messages.length}`, steps }, { chunkDelayMs: 2 })
          }
          if (messages.at(-1)?.role === 'tool') return textReply('r-parent-2', 'Both in.')
          const calls =
            of === 'one call'
              ? [call('p1', 'both', {})]
              : [call('p1', 'researcher', { prompt: 'cats' }), call('p2', 'researcher', { prompt: 'dogs' })]
          return chatStream({ id: 'r-parent-1', steps: calls })
        })
        const spec = { name: 'researcher', system: 'You research.', tools: [readFile] }
        const both = defineTool({
          name: 'both',
          description: 'Runs two researchers at once',
          parameters: Type.Object({}),
          execute: async (_args, ctx) => {
            const outcomes = await Promise.all(['cats', 'dogs'].map((topic) => ctx.runSubAgent(spec, topic)))
            return outcomes.map((outcome) => outcome.text).join(' ')
          },
        })
        const live: Event[] = []
        const agent = record(h.createAgent({ tools: [both, researcher] }), live)
        expect((await drain(agent.run('Research cats and dogs'))).reason).toBe('completed')
        return { sessionId: agent.sessionId, live, concurrent: true }
      },
    ],
  ),
]
