import { type Agent, defineSubAgent, defineTool } from '@kode/core'
import type { Event, HistoryEvent, ReplayEvent } from '@kode/protocol'
import type { RecordedRequest, ScriptedResponse } from '@kode/providers/testing'
import { deriveReplayEvents, replaySession, replaySessionBatches, type SessionStore } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, type Harness, useHarness } from './helpers/harness.js'
import { expectOrdered } from './helpers/history-checks.js'
import { replayedPart } from './helpers/replayed.js'

// A stored session replays into the events its tasks emitted live, when a sub-agent paused for
// approval and the parent was carried on: with the sub-agents' sessions inline (replaySession),
// and from the parent's history alone, which records what its sub-agents wait for.

type Messages = { role: string; content?: unknown }[]

/** A writer sub-agent whose write_file tool needs approval; `manager` runs a writer. */
function agents() {
  const writeFile = defineTool({
    name: 'write_file',
    description: 'Writes a file',
    parameters: Type.Object({ path: Type.String() }),
    needsApproval: true,
    execute: ({ path }) => `wrote ${path}`,
  })
  const writer = defineSubAgent({
    name: 'writer',
    description: 'Writes',
    system: 'You write.',
    tools: [writeFile],
  })
  const manager = defineSubAgent({
    name: 'manager',
    description: 'Manages',
    system: 'You manage.',
    tools: [writer],
  })
  return { writer, manager }
}

/**
 * The model of every session: the parent calls `top` (writer or manager), the manager calls the
 * writer, the writer writes each of `paths` in turn (one call per response), then each answers
 * with the last tool result.
 */
function route(top: 'writer' | 'manager', paths: readonly string[]) {
  return (request: RecordedRequest): ScriptedResponse => {
    const messages = (request.body as { messages: Messages }).messages
    const last = messages.at(-1)!
    const results = messages.filter((m) => m.role === 'tool').length
    const answer = (who: string) => textReply(`r-${who}-end`, `${who}: ${String(last.content)}`)
    switch (messages[0]?.content) {
      case 'You write.': {
        const path = paths[results]
        if (path === undefined) return answer('writer')
        return chatStream({
          id: `r-writer-${results + 1}`,
          steps: [call(`w${results + 1}`, 'write_file', { path })],
        })
      }
      case 'You manage.':
        if (last.role === 'tool') return answer('manager')
        return chatStream({ id: 'r-manager-1', steps: [call('m1', 'writer', { prompt: 'Write' })] })
      default:
        if (last.role === 'tool') return answer('parent')
        return chatStream({ id: 'r-parent-1', steps: [call('p1', top, { prompt: 'Go' })] })
    }
  }
}

/**
 * Runs the parent, then continues it, approving every call, until it completes: each task's
 * events. `atPause` runs whenever the parent's task ends awaiting approval, with the events of the
 * tasks so far.
 */
async function runToTheEnd(
  h: Harness,
  top: 'writer' | 'manager',
  paths: readonly string[],
  atPause?: (agent: Agent, live: readonly Event[]) => Promise<void>,
) {
  h.server.handle(route(top, paths))
  const tools = agents()
  const agent = h.createAgent({ tools: [tools[top]] })
  const tasks: Event[][] = []
  let { events, outcome } = await collect(agent.run('Please write'))
  tasks.push(events)
  while (outcome.reason === 'awaiting_approval') {
    await atPause?.(agent, tasks.flat())
    const approvals = (outcome.pendingApprovals ?? []).map((p) => ({
      toolCallId: p.toolCallId,
      approved: true,
    }))
    ;({ events, outcome } = await collect(agent.continue({ approvals })))
    tasks.push(events)
  }
  expect(outcome.reason).toBe('completed')
  expect(tasks.length).toBe(paths.length + 1)
  return { agent, tasks, live: tasks.flat() }
}

/** Events as JSON carries them. */
const json = (events: readonly Event[]): unknown[] => JSON.parse(JSON.stringify(events))

/** The approval events of `events`. */
const approvals = (events: readonly Event[]) =>
  events.filter((e) => e.type === 'tool_approval_request' || e.type === 'tool_approval_decision')

/** Each scenario: its name, the sub-agent the parent calls, the files the writer writes (one pause each). */
const SCENARIOS = [
  ['a writer that pauses once', 'writer', ['a.txt']],
  ['a writer that pauses twice in one call', 'writer', ['a.txt', 'b.txt']],
  ['a writer two levels down', 'manager', ['a.txt']],
] as const

describe.each(['memory', 'file'] as const)('replay of a carried-on sub-agent approval (%s store)', (kind) => {
  const harness = useHarness(kind)

  test.each(SCENARIOS)(
    '%s: replaySession, sub-agents inline, is the live events of every task',
    async (_, top, paths) => {
      const h = harness()
      const { agent, live } = await runToTheEnd(h, top, paths)
      expectOrdered(live)
      const replay = await replaySession(h.store, agent.sessionId)
      expectOrdered(replay)
      expect(json(replay)).toEqual(replayedPart(live))
      // Read one record at a time, as a streaming host does: the same.
      expect(json(await replaySession(h.store, agent.sessionId, { batchSize: 1 }))).toEqual(json(replay))
    },
  )

  test.each(SCENARIOS)(
    '%s: replaySession while the parent is still paused, sub-agents inline, is the live events so far',
    async (_, top, paths) => {
      const h = harness()
      let pauses = 0
      await runToTheEnd(h, top, paths, async (agent, live) => {
        pauses++
        const replay = await replaySession(h.store, agent.sessionId)
        expectOrdered(replay)
        // The sub-agents' tasks that ran in the parent's paused tasks, not only their requests.
        expect(json(replay)).toEqual(replayedPart(live))
        expect(json(await replaySession(h.store, agent.sessionId, { batchSize: 1 }))).toEqual(json(replay))
        expect(json(await collectBatches(h.store, agent.sessionId))).toEqual(json(replay))
      })
      expect(pauses).toBe(paths.length)
    },
  )

  test.each(SCENARIOS)(
    "%s: the parent's history alone replays the sub-agents' approval events as live",
    async (_, top, paths) => {
      const h = harness()
      const { agent, tasks, live } = await runToTheEnd(h, top, paths)
      const history = await agent.history()
      const sessionId = agent.sessionId
      const childApprovals = (events: readonly Event[]) =>
        json(approvals(events).filter((e) => e.sessionId !== sessionId))
      // Each paused task, from the history it left: the request the sub-agent emitted.
      for (let n = 1; n < tasks.length; n++) {
        const paused = history.slice(0, endOfTask(history, n))
        expect(childApprovals(deriveReplayEvents(paused, { sessionId })).slice(-1)).toEqual(
          childApprovals(tasks[n - 1]!).slice(-1),
        )
      }
      // The whole history: each request and the decision that answered it.
      expect(childApprovals(deriveReplayEvents(history, { sessionId }))).toEqual(childApprovals(live))
    },
  )
})

describe.each(['memory', 'file'] as const)('replay of a superseded sub-agent approval (%s store)', (kind) => {
  const harness = useHarness(kind)

  test.each([
    ['a writer', 'writer'],
    ['a writer two levels down', 'manager'],
  ] as const)(
    "%s whose call a new user message denies: replaySession shows the sub-agents' paused task and the denial as live",
    async (_, top) => {
      const h = harness()
      h.server.handle((request) => {
        const messages = (request.body as { messages: Messages }).messages
        if (messages.at(-1)?.content === 'Never mind') return textReply('r-parent-3', 'Fine.')
        return route(top, ['a.txt'])(request)
      })
      const agent = h.createAgent({ tools: [agents()[top]] })
      const first = await collect(agent.run('Please write'))
      expect(first.outcome.reason).toBe('awaiting_approval')
      const second = await collect(agent.run('Never mind'))
      const live = [...first.events, ...second.events]
      expectOrdered(live)
      expect(approvals(live).map((e) => e.type)).toEqual(['tool_approval_request', 'tool_approval_decision'])
      const replay = await replaySession(h.store, agent.sessionId)
      expectOrdered(replay)
      expect(json(replay)).toEqual(replayedPart(live))
      expect(json(await replaySession(h.store, agent.sessionId, { batchSize: 1 }))).toEqual(json(replay))
      expect(json(await collectBatches(h.store, agent.sessionId))).toEqual(json(replay))
      // Without the sub-agents' sessions, the parent's history alone shows the request and the denial.
      const alone = deriveReplayEvents(await agent.history(), { sessionId: agent.sessionId })
      expectOrdered(alone)
      expect(json(approvals(alone))).toEqual(json(approvals(live)))
    },
  )
})

/** The replay of `sessionId` as `replaySessionBatches` streams it, one record per batch, joined. */
async function collectBatches(store: SessionStore, sessionId: string): Promise<ReplayEvent[]> {
  const events: ReplayEvent[] = []
  for await (const batch of replaySessionBatches(store, sessionId, { batchSize: 1 })) events.push(...batch)
  return events
}

/** The index after the `n`th `task_metadata` record of `history`. */
function endOfTask(history: readonly HistoryEvent[], n: number): number {
  let seen = 0
  for (let i = 0; i < history.length; i++) {
    const record = history[i]!
    if (!('role' in record) && record.type === 'task_metadata' && ++seen === n) return i + 1
  }
  return history.length
}
