import { defineSubAgent, defineTool, pendingApprovals } from '@kode/core'
import type { Event } from '@kode/protocol'
import type { RecordedRequest, ScriptedResponse } from '@kode/providers/testing'
import { deriveReplayEvents, forkSession, replaySession, type SessionStore } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, type Harness, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { recordingAppends } from './helpers/recording-store.js'
import { replayedPart, replayOf, replayThenLive } from './helpers/replayed.js'
import { summarize, summarizeHistory, textResponse } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

type Messages = { role: string; content?: unknown }[]

/** A writer sub-agent whose write_file tool needs approval; counts the files it really wrote. */
function writerAgent() {
  const written: string[] = []
  const writeFile = defineTool({
    name: 'write_file',
    description: 'Writes a file',
    parameters: Type.Object({ path: Type.String() }),
    needsApproval: true,
    execute: ({ path }) => {
      written.push(path)
      return `wrote ${path}`
    },
  })
  const writer = defineSubAgent({
    name: 'writer',
    description: 'Writes files',
    system: 'You write.',
    tools: [writeFile],
  })
  return { writer, written }
}

/**
 * Parent: asks the writer for a.txt, then reports what the writer said. Writer: calls write_file,
 * then reports the tool's result.
 */
function route(request: RecordedRequest): ScriptedResponse {
  const messages = (request.body as { messages: Messages }).messages
  const last = messages.at(-1)!
  if (messages[0]?.content === 'You write.') {
    if (last.role === 'tool') return textReply('r-child-2', `Writer: ${String(last.content)}`)
    return chatStream({ id: 'r-child-1', steps: [call('w1', 'write_file', { path: 'a.txt' })] })
  }
  if (last.role === 'tool') return textReply('r-parent-2', `Parent: ${String(last.content)}`)
  if (last.content === 'Never mind') return textReply('r-parent-3', 'Fine.')
  return chatStream({ id: 'r-parent-1', steps: [call('p1', 'writer', { prompt: 'Write a.txt' })] })
}

const PAUSED = [
  'task_start',
  'user_message: Please write a.txt',
  'turn_start',
  'tool_call_start p1 writer',
  'response_complete: ',
  'usage 100/20',
  'context_usage 120/128000',
  'tool_call p1 writer {"prompt":"Write a.txt"}',
  '[id3] task_start sub-agent writer',
  '[id3] user_message: Write a.txt',
  '[id3] turn_start',
  '[id3] tool_call_start w1 write_file',
  '[id3] response_complete: ',
  '[id3] usage 100/20',
  '[id3] context_usage 120/128000',
  '[id3] tool_approval_request w1 write_file {"path":"a.txt"}',
  '[id3] turn_end',
  '[id3] task_metadata turns=1 subAgents=0',
  '[id3] task_finish awaiting_approval: ',
  'turn_end',
  'task_metadata turns=1 subAgents=1',
  'task_finish awaiting_approval: ',
]

const PARENT_PAUSED_HISTORY = [
  'user: Please write a.txt',
  'assistant tool_use: call p1 writer {"prompt":"Write a.txt"}',
  'approval_request w1 write_file {"path":"a.txt"} in id3 via p1/id3',
  'task_metadata turns=1 subAgents=1',
]

const CHILD_PAUSED_HISTORY = [
  'system: You write.',
  'user: Write a.txt',
  'assistant tool_use: call w1 write_file {"path":"a.txt"}',
  'approval_request w1 write_file {"path":"a.txt"}',
  'task_metadata turns=1 subAgents=0',
]

/** The continued run's events, with the writer's result text. */
function continued(decision: string, toolResult: string): string[] {
  return [
    'task_start',
    'turn_start',
    '[id3] task_start sub-agent writer',
    '[id3] turn_start',
    `[id3] tool_approval_decision w1 ${decision}`,
    '[id3] tool_call w1 write_file {"path":"a.txt"}',
    `[id3] tool_result w1 ${toolResult.startsWith('wrote') ? 'success' : 'error'} (last): ${toolResult}`,
    '[id3] turn_end',
    '[id3] turn_start',
    '[id3] assistant_text_start',
    `[id3] text: Writer: ${toolResult}`,
    '[id3] assistant_text_end',
    `[id3] response_complete: Writer: ${toolResult}`,
    '[id3] usage 100/20',
    '[id3] context_usage 120/128000',
    '[id3] turn_end',
    '[id3] task_metadata turns=1 subAgents=0',
    `[id3] task_finish completed: Writer: ${toolResult}`,
    `tool_result p1 success (last): Writer: ${toolResult}`,
    'turn_end',
    'turn_start',
    'assistant_text_start',
    `text: Parent: Writer: ${toolResult}`,
    'assistant_text_end',
    `response_complete: Parent: Writer: ${toolResult}`,
    'usage 100/20',
    'context_usage 120/128000',
    'turn_end',
    'task_metadata turns=1 subAgents=1',
    `task_finish completed: Parent: Writer: ${toolResult}`,
  ]
}

async function pausedParent(h: Harness) {
  h.server.handle(route)
  const { writer, written } = writerAgent()
  const agent = h.createAgent({ tools: [writer] })
  const first = await collect(agent.run('Please write a.txt'))
  expectOrdered(first.events)
  expect(summarize(first.events)).toEqual(PAUSED)
  expect(first.outcome).toMatchObject({
    reason: 'awaiting_approval',
    pendingApprovals: [
      { toolCallId: 'w1', toolName: 'write_file', arguments: '{"path":"a.txt"}', sessionId: 'id3' },
    ],
  })
  expect(summarizeHistory(await agent.history())).toEqual(PARENT_PAUSED_HISTORY)
  // What a host that resumes the session reads: the same list as the outcome's.
  expect(pendingApprovals(await agent.history())).toEqual(first.outcome.pendingApprovals)
  expect(summarizeHistory(await h.store.read('id3'))).toEqual(CHILD_PAUSED_HISTORY)
  expect(written).toEqual([])
  return { agent, written, events: first.events }
}

/** The replayed events of one session (not its sub-agents'), as JSON would carry them. */
function parentPart(events: readonly Event[], sessionId: string): unknown[] {
  return replayedPart(events.filter((event) => event.sessionId === sessionId))
}

describe.each(['memory', 'file'] as const)('sub-agent approval (%s store)', (kind) => {
  const harness = useHarness(kind)

  test("a sub-agent's call waits on the parent; approving it on the parent carries the sub-agent and the parent on", async () => {
    const h = harness()
    const { agent, written, events: first } = await pausedParent(h)
    const second = await collect(agent.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }))
    // The paused task announced the call; the continued one answers it.
    expectOrdered([...first, ...second.events])
    expect(summarize(second.events)).toEqual(continued('approved', 'wrote a.txt'))
    expect(second.outcome).toMatchObject({ reason: 'completed', text: 'Parent: Writer: wrote a.txt' })
    expect(second.outcome.pendingApprovals).toBeUndefined()
    expect(written).toEqual(['a.txt'])
    const parent = await agent.history()
    expectValidHistory(parent)
    expect(summarizeHistory(parent)).toEqual([
      ...PARENT_PAUSED_HISTORY,
      'approval_decision w1 in id3 approved',
      'tool p1 success: Writer: wrote a.txt',
      'assistant stop: text "Parent: Writer: wrote a.txt"',
      'task_metadata turns=1 subAgents=1',
    ])
    const child = await h.store.read('id3')
    expectValidHistory(child)
    expect(summarizeHistory(child)).toEqual([
      ...CHILD_PAUSED_HISTORY,
      'approval_decision w1 approved',
      'tool w1 success: wrote a.txt',
      'assistant stop: text "Writer: wrote a.txt"',
      'task_metadata turns=1 subAgents=0',
    ])
  })
})

describe('sub-agent approval', () => {
  const harness = useHarness('file')

  test("a sub-agent's waiting calls are recorded in its parent's history in one append", async () => {
    const h = harness()
    const { store, appends } = recordingAppends(h.store)
    const { writer } = writerAgent()
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You write.') {
        return chatStream({
          id: 'r-child-1',
          steps: [call('w1', 'write_file', { path: 'a.txt' }), call('w2', 'write_file', { path: 'b.txt' })],
        })
      }
      return chatStream({ id: 'r-parent-1', steps: [call('p1', 'writer', { prompt: 'Write a and b' })] })
    })
    const agent = h.createAgent({ store, tools: [writer] })
    expect((await collect(agent.run('Please write a and b'))).outcome.reason).toBe('awaiting_approval')
    const relayed = appends.filter((records) =>
      records.some((r) => !('role' in r) && r.type === 'approval_request' && r.subAgentCall !== undefined),
    )
    expect(relayed.map((records) => records.map((r) => ('toolCallId' in r ? r.toolCallId : r.id)))).toEqual([
      ['w1', 'w2'],
    ])
  })

  test("a fork at a sub-agent's pause is decided apart from its source: neither writes into the other's sub-agent", async () => {
    const h = harness()
    const { agent, written } = await pausedParent(h)
    const fork = await forkSession(h.store, agent.sessionId)
    const forked = h.createAgent({ sessionId: fork.id, tools: [writerAgent().writer] })
    const onFork = await collect(forked.continue({ approvals: [{ toolCallId: 'w1', approved: false }] }))
    expect(onFork.outcome).toMatchObject({ reason: 'completed', text: 'Parent: Writer: denied by the user' })
    // The source's sub-agent still waits, as the source does.
    expect(summarizeHistory(await h.store.read('id3'))).toEqual(CHILD_PAUSED_HISTORY)
    const source = await collect(agent.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }))
    expect(source.outcome).toMatchObject({ reason: 'completed', text: 'Parent: Writer: wrote a.txt' })
    expect(written).toEqual(['a.txt'])
    const forkHistory = await forked.history()
    expectValidHistory(forkHistory)
    const copy = forkHistory.find((e) => 'type' in e && e.type === 'approval_request')
    const copyId = copy && 'subAgentCall' in copy ? copy.subAgentCall?.sessionId : undefined
    expect(copyId).toBeDefined()
    expect(copyId).not.toBe('id3')
    expect(summarizeHistory(await h.store.read(copyId!)).slice(CHILD_PAUSED_HISTORY.length)).toEqual([
      'approval_decision w1 denied',
      'tool w1 error: denied by the user',
      'assistant stop: text "Writer: denied by the user"',
      'task_metadata turns=1 subAgents=0',
    ])
  })

  test("a fork after a sub-agent's decision, before its call's result, settles its own copy of the sub-agent", async () => {
    const h = harness()
    const { agent, written } = await pausedParent(h)
    await collect(agent.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }))
    expect(written).toEqual(['a.txt'])
    const decision = (await agent.history()).find((e) => 'type' in e && e.type === 'approval_decision')!
    const fork = await forkSession(h.store, agent.sessionId, decision.id)
    const forked = h.createAgent({ sessionId: fork.id, tools: [writerAgent().writer] })
    const onFork = await collect(forked.continue())
    expect(onFork.outcome.reason).toBe('completed')
    const forkHistory = await forked.history()
    expectValidHistory(forkHistory)
    const request = forkHistory.find((e) => 'type' in e && e.type === 'approval_request')
    const copyId = request && 'subAgentCall' in request ? request.subAgentCall?.sessionId : undefined
    expect(copyId).not.toBe('id3')
    // As if its process had died after the decision: the approved call is settled, not left waiting.
    const copy = await h.store.read(copyId!)
    expectValidHistory(copy)
    expect(summarizeHistory(copy).slice(CHILD_PAUSED_HISTORY.length)).toEqual([
      'approval_decision w1 approved',
      'tool w1 error: The task stopped before this tool call finished (its process ended); it may or may not have run.',
      "error: The task stopped (its process ended); the parent's call that ran it was answered without it.",
      'task_metadata turns=0 subAgents=0',
    ])
    expect(written).toEqual(['a.txt'])
  })

  test('a denied call of a sub-agent is never run; the sub-agent reads the denial and the parent its answer', async () => {
    const h = harness()
    const { agent, written, events: first } = await pausedParent(h)
    const second = await collect(
      agent.continue({ approvals: [{ toolCallId: 'w1', approved: false, reason: 'not now' }] }),
    )
    expectOrdered([...first, ...second.events])
    const denial = 'denied by the user: not now'
    expect(summarize(second.events)).toEqual(continued('denied: not now', denial))
    expect(written).toEqual([])
    const parent = await agent.history()
    expectValidHistory(parent)
    expect(summarizeHistory(parent).slice(4)).toEqual([
      'approval_decision w1 in id3 denied: not now',
      `tool p1 success: Writer: ${denial}`,
      `assistant stop: text "Parent: Writer: ${denial}"`,
      'task_metadata turns=1 subAgents=1',
    ])
    expect(summarizeHistory(await h.store.read('id3')).slice(5)).toEqual([
      'approval_decision w1 denied: not now',
      `tool w1 error: ${denial}`,
      `assistant stop: text "Writer: ${denial}"`,
      'task_metadata turns=1 subAgents=0',
    ])
  })

  test("a new user message answers the parent's waiting call and settles the sub-agent: its session records and announces the denial, nothing stays pending", async () => {
    const h = harness()
    const { agent, written, events: first } = await pausedParent(h)
    const { events, outcome } = await collect(agent.run('Never mind'))
    expectOrdered([...first, ...events])
    const waited =
      "The sub-agent's tool calls were waiting for the user's approval; the user sent a new message instead."
    const superseded =
      "The user sent the parent agent a new message instead of deciding: this sub-agent's calls waiting for approval never ran."
    const denied = 'denied by the user: the user sent a new message instead'
    expect(summarize(events)).toEqual([
      'task_start',
      'turn_start',
      '[id3] task_start sub-agent writer',
      '[id3] turn_start',
      '[id3] tool_approval_decision w1 denied: the user sent a new message instead',
      '[id3] tool_call w1 write_file {"path":"a.txt"}',
      `[id3] tool_result w1 error (last): ${denied}`,
      '[id3] turn_end',
      `[id3] error: ${superseded}`,
      '[id3] task_metadata turns=0 subAgents=0',
      '[id3] task_finish error: ',
      `tool_result p1 error (last): ${waited}`,
      'turn_end',
      'user_message: Never mind',
      ...textResponse('Fine.'),
      'turn_end',
      'task_metadata turns=1 subAgents=1',
      'task_finish completed: Fine.',
    ])
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual([])
    // The parent's result links the sub-agent it settled.
    expect(events.find((e) => e.type === 'tool_result' && e.sessionId === agent.sessionId)).toMatchObject({
      uiExtra: { type: 'session', sessionId: 'id3' },
    })
    const parent = await agent.history()
    expectValidHistory(parent)
    expect(summarizeHistory(parent)).toEqual([
      ...PARENT_PAUSED_HISTORY,
      'approval_decision w1 in id3 denied: the user sent a new message instead',
      `tool p1 error: ${waited}`,
      'user: Never mind',
      'assistant stop: text "Fine."',
      'task_metadata turns=1 subAgents=1',
    ])
    const child = await h.store.read('id3')
    expectValidHistory(child)
    expect(summarizeHistory(child)).toEqual([
      ...CHILD_PAUSED_HISTORY,
      'approval_decision w1 denied: the user sent a new message instead',
      `tool w1 error: ${denied}`,
      `error: ${superseded}`,
      'task_metadata turns=0 subAgents=0',
    ])
    expect(pendingApprovals(child)).toEqual([])
    // The live events of both tasks are the replay, the sub-agent's settling included.
    expect(await replaySession(h.store, agent.sessionId)).toEqual(replayedPart([...first, ...events]))
  })

  test("a new user message after the paused sub-agent's session was deleted: the parent announces the denial its replay shows", async () => {
    const h = harness()
    const { agent, events: first } = await pausedParent(h)
    await h.store.delete('id3')
    const { events, outcome } = await collect(agent.run('Never mind'))
    expect(outcome.reason).toBe('completed')
    expectOrdered([...first, ...events])
    const waited =
      "The sub-agent's tool calls were waiting for the user's approval; the user sent a new message instead."
    // No sub-agent to carry on: its denial is announced where it waited, as the replay shows it.
    expect(summarize(events).slice(0, 6)).toEqual([
      'task_start',
      'turn_start',
      '[id3] tool_approval_decision w1 denied: the user sent a new message instead',
      `tool_result p1 error (last): ${waited}`,
      'turn_end',
      'user_message: Never mind',
    ])
    const parent = await agent.history()
    expectValidHistory(parent)
    // The parent's replay (its sub-agent's session gone) from the end of the paused task on.
    const replay = replayOf(parent, agent.sessionId)
    const paused = replay.findIndex((event) => (event as Event).type === 'task_metadata')
    expect(replayedPart(events)).toEqual(replay.slice(paused + 1))
  })

  test('a decision for a sub-agent whose session was deleted: the parent announces it, as its replay shows it', async () => {
    const h = harness()
    const { agent } = await pausedParent(h)
    await h.store.delete('id3')
    const { events, outcome } = await collect(
      agent.continue({ approvals: [{ toolCallId: 'w1', approved: false, sessionId: 'id3' }] }),
    )
    expect(outcome.reason).toBe('completed')
    // The call runs again and cannot carry the sub-agent on; the decision is announced before its result.
    expect(summarize(events).slice(0, 3)).toEqual([
      'task_start',
      'turn_start',
      '[id3] tool_approval_decision w1 denied',
    ])
    expect(summarize(events)[3]).toMatch(/^tool_result p1 error \(last\): /)
    const parent = await agent.history()
    expectValidHistory(parent)
    const replay = replayOf(parent, agent.sessionId)
    const paused = replay.findIndex((event) => (event as Event).type === 'task_metadata')
    expect(replayedPart(events)).toEqual(replay.slice(paused + 1))
  })

  test("a new user message when the paused sub-agent's session cannot be written: the parent announces the denial its replay shows", async () => {
    const h = harness()
    const { agent, events: first } = await pausedParent(h)
    // The sub-agent's session takes no more records (a full disk, a lost database).
    const failing: SessionStore = {
      ...h.store,
      async acquire(sessionId) {
        const lease = await h.store.acquire(sessionId)
        if (sessionId !== 'id3') return lease
        return {
          sessionId,
          release: () => lease.release(),
          append: () => Promise.reject(new Error('disk full')),
        }
      },
    }
    const again = h.createAgent({ sessionId: agent.sessionId, store: failing, tools: [writerAgent().writer] })
    const { events, outcome } = await collect(again.run('Never mind'))
    expect(outcome.reason).toBe('completed')
    expectOrdered([...first, ...events])
    const waited =
      "The sub-agent's tool calls were waiting for the user's approval; the user sent a new message instead."
    expect(summarize(events).slice(0, 10)).toEqual([
      'task_start',
      'turn_start',
      '[id3] task_start sub-agent writer',
      '[id3] turn_start',
      '[id3] error: disk full',
      '[id3] turn_end',
      '[id3] task_finish error: ',
      '[id3] tool_approval_decision w1 denied: the user sent a new message instead',
      `tool_result p1 error (last): ${waited}`,
      'turn_end',
    ])
    // The sub-agent's session is as the pause left it.
    expect(summarizeHistory(await h.store.read('id3'))).toEqual(CHILD_PAUSED_HISTORY)
    // The replay of the parent, its sub-agent inline, from the end of the paused task on: the live
    // events without the sub-agent's abandoned task, which its session could not record.
    const replay = await replaySession(h.store, agent.sessionId)
    const paused = replay.findIndex(
      (event) => event.type === 'task_metadata' && event.sessionId === agent.sessionId,
    )
    const recorded = events.filter(
      (event) => event.sessionId !== 'id3' || event.type === 'tool_approval_decision',
    )
    expect(replayedPart(recorded)).toEqual(replay.slice(paused + 1))
  })

  test("a continue interrupted before the parent's call runs carries the sub-agent on interrupted: its session records and announces the decision, nothing stays pending", async () => {
    const h = harness()
    const { agent, written, events: first } = await pausedParent(h)
    const stopped = new AbortController()
    stopped.abort()
    const { events, outcome } = await collect(
      agent.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }, { signal: stopped.signal }),
    )
    expectOrdered([...first, ...events])
    const interrupted = 'The user interrupted the task before this tool call ran.'
    expect(summarize(events)).toEqual([
      'task_start',
      'turn_start',
      '[id3] task_start sub-agent writer',
      '[id3] turn_start',
      '[id3] tool_approval_decision w1 approved',
      '[id3] tool_call w1 write_file {"path":"a.txt"}',
      `[id3] tool_result w1 error (last): ${interrupted}`,
      '[id3] interrupt',
      '[id3] turn_end',
      '[id3] task_metadata turns=0 subAgents=0',
      '[id3] task_finish aborted: ',
      `tool_result p1 error (last): ${interrupted}`,
      'interrupt',
      'turn_end',
      'task_metadata turns=0 subAgents=1',
      'task_finish aborted: ',
    ])
    expect(outcome.reason).toBe('aborted')
    expect(written).toEqual([])
    // The parent's result links the sub-agent it settled, as a call that carried it on does.
    expect(events.find((e) => e.type === 'tool_result' && e.sessionId === agent.sessionId)).toMatchObject({
      uiExtra: { type: 'session', sessionId: 'id3' },
    })
    const child = await h.store.read('id3')
    expectValidHistory(child)
    expect(summarizeHistory(child)).toEqual([
      ...CHILD_PAUSED_HISTORY,
      'approval_decision w1 approved',
      `tool w1 aborted: ${interrupted}`,
      'task_metadata turns=0 subAgents=0',
    ])
    expect(pendingApprovals(child)).toEqual([])
    expect(pendingApprovals(await agent.history())).toEqual([])
    // The live events of both tasks are the replay, the sub-agent's settling included.
    const replay = await replaySession(h.store, agent.sessionId)
    expect(replay.filter((e) => e.type === 'tool_approval_decision')).toEqual(
      replayedPart(events.filter((e) => e.type === 'tool_approval_decision')),
    )
    expect(replay).toEqual(replayedPart([...first, ...events]))
  })

  test("a paused sub-agent its call does not carry on when it runs again is settled before the call's result, saying so", async () => {
    const h = harness()
    h.server.handle(route)
    const writeFile = defineTool({
      name: 'write_file',
      description: 'Writes a file',
      parameters: Type.Object({ path: Type.String() }),
      needsApproval: true,
      execute: ({ path }) => `wrote ${path}`,
    })
    const spec = { name: 'writer', system: 'You write.', tools: [writeFile] }
    let runs = 0
    const once = defineTool({
      name: 'writer',
      description: 'Runs the writer the first time only',
      parameters: Type.Object({ prompt: Type.String() }),
      execute: async ({ prompt }, ctx) => {
        if (runs++ > 0) return 'Not again.'
        return (await ctx.runSubAgent(spec, prompt)).text
      },
    })
    const agent = h.createAgent({ tools: [once] })
    expect((await collect(agent.run('Please write a.txt'))).outcome.reason).toBe('awaiting_approval')
    const { events, outcome } = await collect(
      agent.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }),
    )
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Parent: Not again.' })
    const notCarriedOn =
      "The parent's call that ran this sub-agent ended without carrying it on: its calls waiting for approval never ran."
    expect(summarize(events).slice(0, 12)).toEqual([
      'task_start',
      'turn_start',
      '[id3] task_start sub-agent writer',
      '[id3] turn_start',
      '[id3] tool_approval_decision w1 approved',
      '[id3] tool_call w1 write_file {"path":"a.txt"}',
      `[id3] tool_result w1 error (last): The task failed before this tool call ran: ${notCarriedOn}`,
      '[id3] turn_end',
      `[id3] error: ${notCarriedOn}`,
      '[id3] task_metadata turns=0 subAgents=0',
      '[id3] task_finish error: ',
      'tool_result p1 success (last): Not again.',
    ])
    const child = await h.store.read('id3')
    expectValidHistory(child)
    expect(pendingApprovals(child)).toEqual([])
    expect(summarizeHistory(child).slice(CHILD_PAUSED_HISTORY.length)).toEqual([
      'approval_decision w1 approved',
      `tool w1 error: The task failed before this tool call ran: ${notCarriedOn}`,
      `error: ${notCarriedOn}`,
      'task_metadata turns=0 subAgents=0',
    ])
  })

  test('another process continues the parent: the decision reaches the sub-agent through the store', async () => {
    const h = harness()
    const { agent, events: first } = await pausedParent(h)
    await agent.close()
    const { writer, written } = writerAgent()
    const later = h.createAgent({ store: h.reopenStore(), sessionId: agent.sessionId, tools: [writer] })
    expect((await later.history()).length).toBe(4)
    const { events, outcome } = await collect(
      later.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }),
    )
    expectOrdered([...first, ...events])
    expect(summarize(events)).toEqual(continued('approved', 'wrote a.txt'))
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual(['a.txt'])
    expectValidHistory(await later.history())
    expectValidHistory(await h.store.read('id3'))
  })

  test("a continued parent does not announce its sub-agent's call again: its events extend the replay of the paused history", async () => {
    const h = harness()
    const { agent, events: first } = await pausedParent(h)
    const sessionId = agent.sessionId
    const paused = await agent.history()
    // The paused task's events are the replay of the history it leaves: the call was announced.
    expect(parentPart(first, sessionId)).toEqual(
      parentPart(replayOf(paused, sessionId) as Event[], sessionId),
    )
    const { events: second } = await collect(
      agent.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }),
    )
    const announced = (events: readonly Event[]) =>
      summarize(events.filter((e) => e.type === 'tool_call' && e.sessionId === sessionId))
    expect(announced([...first, ...second])).toEqual(['tool_call p1 writer {"prompt":"Write a.txt"}'])
    const history = await agent.history()
    const replay = replayOf(history, sessionId) as Event[]
    expectOrdered(replayThenLive(paused, sessionId, second))
    expect(parentPart(replayThenLive(paused, sessionId, second), sessionId)).toEqual(
      parentPart(replay, sessionId),
    )
    expect(parentPart([...first, ...second], sessionId)).toEqual(parentPart(replay, sessionId))
  })

  test('replay of the paused parent shows the request with the sub-agent session id, and once continued the sub-agent inline', async () => {
    const h = harness()
    const { agent } = await pausedParent(h)
    const paused = deriveReplayEvents(await agent.history(), { sessionId: agent.sessionId })
    expectOrdered(paused)
    expect(summarize(paused, agent.sessionId)).toEqual([
      'user_message: Please write a.txt',
      'turn_start',
      'response_complete: ',
      'usage 100/20',
      'tool_call p1 writer {"prompt":"Write a.txt"}',
      '[id3] tool_approval_request w1 write_file {"path":"a.txt"}',
      'turn_end',
      'task_metadata turns=1 subAgents=1',
    ])
    await collect(agent.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }))
    const done = await replaySession(h.store, agent.sessionId)
    expectOrdered(done)
    // The sub-agent's request is shown once, by its own replay, inline. The sub-agent's first task
    // is where it ran live, inside the parent's first; the rest before the parent's result, in the
    // parent's continued turn. The continued calls replay in a turn of their own, parent and
    // sub-agent alike, as live.
    expect(summarize(done, agent.sessionId)).toEqual([
      'user_message: Please write a.txt',
      'turn_start',
      'response_complete: ',
      'usage 100/20',
      'tool_call p1 writer {"prompt":"Write a.txt"}',
      '[id3] user_message: Write a.txt',
      '[id3] turn_start',
      '[id3] response_complete: ',
      '[id3] usage 100/20',
      '[id3] tool_approval_request w1 write_file {"path":"a.txt"}',
      '[id3] turn_end',
      '[id3] task_metadata turns=1 subAgents=0',
      'turn_end',
      'task_metadata turns=1 subAgents=1',
      'turn_start',
      '[id3] turn_start',
      '[id3] tool_approval_decision w1 approved',
      '[id3] tool_call w1 write_file {"path":"a.txt"}',
      '[id3] tool_result w1 success (last): wrote a.txt',
      '[id3] turn_end',
      '[id3] turn_start',
      '[id3] response_complete: Writer: wrote a.txt',
      '[id3] usage 100/20',
      '[id3] turn_end',
      '[id3] task_metadata turns=1 subAgents=0',
      'tool_result p1 success (last): Writer: wrote a.txt',
      'turn_end',
      'turn_start',
      'response_complete: Parent: Writer: wrote a.txt',
      'usage 100/20',
      'turn_end',
      'task_metadata turns=1 subAgents=1',
    ])
  })

  test('a call two sub-agents deep is decided on the top parent and routed down through both', async () => {
    const h = harness()
    const { writer, written } = writerAgent()
    const manager = defineSubAgent({
      name: 'manager',
      description: 'Manages writers',
      system: 'You manage.',
      tools: [writer],
    })
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      const last = messages.at(-1)!
      if (messages[0]?.content === 'You manage.') {
        if (last.role === 'tool') return textReply('r-manager-2', `Manager: ${String(last.content)}`)
        return chatStream({ id: 'r-manager-1', steps: [call('m1', 'writer', { prompt: 'Write a.txt' })] })
      }
      if (messages[0]?.content === 'You write.' || last.role === 'tool') return route(request)
      return chatStream({ id: 'r-parent-1', steps: [call('p1', 'manager', { prompt: 'Get a.txt written' })] })
    })
    const agent = h.createAgent({ tools: [manager] })
    const first = await collect(agent.run('Please write a.txt'))
    expectOrdered(first.events)
    expect(summarize(first.events)).toEqual([
      'task_start',
      'user_message: Please write a.txt',
      'turn_start',
      'tool_call_start p1 manager',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call p1 manager {"prompt":"Get a.txt written"}',
      '[id3] task_start sub-agent manager',
      '[id3] user_message: Get a.txt written',
      '[id3] turn_start',
      '[id3] tool_call_start m1 writer',
      '[id3] response_complete: ',
      '[id3] usage 100/20',
      '[id3] context_usage 120/128000',
      '[id3] tool_call m1 writer {"prompt":"Write a.txt"}',
      '[id6] task_start sub-agent writer',
      '[id6] user_message: Write a.txt',
      '[id6] turn_start',
      '[id6] tool_call_start w1 write_file',
      '[id6] response_complete: ',
      '[id6] usage 100/20',
      '[id6] context_usage 120/128000',
      '[id6] tool_approval_request w1 write_file {"path":"a.txt"}',
      '[id6] turn_end',
      '[id6] task_metadata turns=1 subAgents=0',
      '[id6] task_finish awaiting_approval: ',
      '[id3] turn_end',
      '[id3] task_metadata turns=1 subAgents=1',
      '[id3] task_finish awaiting_approval: ',
      'turn_end',
      'task_metadata turns=1 subAgents=2',
      'task_finish awaiting_approval: ',
    ])
    expect(first.outcome.pendingApprovals).toEqual([
      { toolCallId: 'w1', toolName: 'write_file', arguments: '{"path":"a.txt"}', sessionId: 'id6' },
    ])
    // Each level records the call where it waits (id6) and its own call that leads there.
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: Please write a.txt',
      'assistant tool_use: call p1 manager {"prompt":"Get a.txt written"}',
      'approval_request w1 write_file {"path":"a.txt"} in id6 via p1/id3',
      'task_metadata turns=1 subAgents=2',
    ])
    expect(summarizeHistory(await h.store.read('id3'))).toEqual([
      'system: You manage.',
      'user: Get a.txt written',
      'assistant tool_use: call m1 writer {"prompt":"Write a.txt"}',
      'approval_request w1 write_file {"path":"a.txt"} in id6 via m1/id6',
      'task_metadata turns=1 subAgents=1',
    ])

    const second = await collect(agent.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }))
    expectOrdered([...first.events, ...second.events])
    const answer = (prefix: string, text: string) =>
      textResponse(text)
        .concat('turn_end')
        .map((line) => prefix + line)
    // Only the writer announces the decision; each level runs its call again (announced when it
    // first ran) and carries on.
    expect(summarize(second.events)).toEqual([
      'task_start',
      'turn_start',
      '[id3] task_start sub-agent manager',
      '[id3] turn_start',
      '[id6] task_start sub-agent writer',
      '[id6] turn_start',
      '[id6] tool_approval_decision w1 approved',
      '[id6] tool_call w1 write_file {"path":"a.txt"}',
      '[id6] tool_result w1 success (last): wrote a.txt',
      '[id6] turn_end',
      ...answer('[id6] ', 'Writer: wrote a.txt'),
      '[id6] task_metadata turns=1 subAgents=0',
      '[id6] task_finish completed: Writer: wrote a.txt',
      '[id3] tool_result m1 success (last): Writer: wrote a.txt',
      '[id3] turn_end',
      ...answer('[id3] ', 'Manager: Writer: wrote a.txt'),
      '[id3] task_metadata turns=1 subAgents=1',
      '[id3] task_finish completed: Manager: Writer: wrote a.txt',
      'tool_result p1 success (last): Manager: Writer: wrote a.txt',
      'turn_end',
      ...answer('', 'Parent: Manager: Writer: wrote a.txt'),
      'task_metadata turns=1 subAgents=2',
      'task_finish completed: Parent: Manager: Writer: wrote a.txt',
    ])
    expect(second.outcome.text).toBe('Parent: Manager: Writer: wrote a.txt')
    expect(written).toEqual(['a.txt'])
    for (const id of [agent.sessionId, 'id3', 'id6']) expectValidHistory(await h.store.read(id))
    expect(summarizeHistory(await agent.history()).slice(4)).toEqual([
      'approval_decision w1 in id6 approved',
      'tool p1 success: Manager: Writer: wrote a.txt',
      'assistant stop: text "Parent: Manager: Writer: wrote a.txt"',
      'task_metadata turns=1 subAgents=2',
    ])
    expect(summarizeHistory(await h.store.read('id3')).slice(5)).toEqual([
      'approval_decision w1 in id6 approved',
      'tool m1 success: Writer: wrote a.txt',
      'assistant stop: text "Manager: Writer: wrote a.txt"',
      'task_metadata turns=1 subAgents=1',
    ])
  })
})

describe('isLastInTurn with a sub-agent that pauses', () => {
  const harness = useHarness()

  test('a result followed only by a call whose sub-agent pauses is the last of its turn, live as in replay', async () => {
    const h = harness()
    // The parent reads b.txt and asks the writer in one response; the writer pauses for approval.
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content !== 'You write.' && messages.at(-1)?.role === 'user') {
        return chatStream({
          id: 'r-parent-1',
          steps: [
            call('c1', 'read_file', { path: 'b.txt' }),
            call('p1', 'writer', { prompt: 'Write a.txt' }),
          ],
        })
      }
      return route(request)
    })
    const { writer } = writerAgent()
    const agent = h.createAgent({ tools: [readFile, writer] })
    const first = await collect(agent.run('Read b, write a'))
    expect(first.outcome.reason).toBe('awaiting_approval')
    const second = await collect(agent.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }))
    const results = (events: readonly Event[]) =>
      summarize(events.filter((e) => e.type === 'tool_result' && e.sessionId === agent.sessionId))
    // Each turn's results end with one marked last: c1's turn ends with it (p1 waits), p1's later.
    expect(results([...first.events, ...second.events])).toEqual([
      'tool_result c1 success (last): contents of b.txt',
      'tool_result p1 success (last): Writer: wrote a.txt',
    ])
    expect(results(deriveReplayEvents(await agent.history(), { sessionId: agent.sessionId }))).toEqual(
      results([...first.events, ...second.events]),
    )
  })

  test("an interrupt on the last result, a later call's sub-agent paused: the task pauses, live as in replay", async () => {
    const h = harness()
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content !== 'You write.' && messages.at(-1)?.role === 'user') {
        return chatStream({
          id: 'r-parent-1',
          steps: [
            call('c1', 'read_file', { path: 'b.txt' }),
            call('p1', 'writer', { prompt: 'Write a.txt' }),
          ],
        })
      }
      return route(request)
    })
    const { writer, written } = writerAgent()
    const agent = h.createAgent({ tools: [readFile, writer] })
    const controller = new AbortController()
    // c1's result is out once the writer paused, marked last: nothing of the turn runs any more.
    agent.events.on('tool_result', (event) => {
      if (event.toolCallId === 'c1') controller.abort()
    })
    const first = await collect(agent.run('Read b, write a', { signal: controller.signal }))
    expect(first.outcome.reason).toBe('awaiting_approval')
    const results = (events: readonly Event[]) =>
      summarize(events.filter((e) => e.type === 'tool_result' && e.sessionId === agent.sessionId))
    expect(results(first.events)).toEqual(['tool_result c1 success (last): contents of b.txt'])
    expect(results(deriveReplayEvents(await agent.history(), { sessionId: agent.sessionId }))).toEqual(
      results(first.events),
    )
    // The writer's call still waits, and is carried on as any paused one.
    const second = await collect(agent.continue({ approvals: [{ toolCallId: 'w1', approved: true }] }))
    expect(second.outcome.reason).toBe('completed')
    expect(written).toEqual(['a.txt'])
    expectValidHistory(await agent.history())
  })

  test('a result before a sub-agent call that finishes is not the last', async () => {
    const h = harness()
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You write.') {
        return textReply('r-child-1', 'Nothing to write.')
      }
      if (messages.at(-1)?.role === 'user') {
        return chatStream({
          id: 'r-parent-1',
          steps: [call('c1', 'read_file', { path: 'b.txt' }), call('p1', 'writer', { prompt: 'Nothing' })],
        })
      }
      return textReply('r-parent-2', 'Done.')
    })
    const { writer } = writerAgent()
    const agent = h.createAgent({ tools: [readFile, writer] })
    const { events } = await collect(agent.run('Read b'))
    const results = events.filter((e) => e.type === 'tool_result' && e.sessionId === agent.sessionId)
    expect(summarize(results)).toEqual([
      'tool_result c1 success: contents of b.txt',
      'tool_result p1 success (last): Nothing to write.',
    ])
  })
})
