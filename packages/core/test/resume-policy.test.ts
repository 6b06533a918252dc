import { defineSubAgent, defineTool, type ToolContext } from '@kode/core'
import type { Event, HistoryEvent } from '@kode/protocol'
import { replaySession, type SessionStore } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, delay, type Harness, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { withAppends } from './helpers/recording-store.js'
import { replayedPart, replayOf, replayThenLive } from './helpers/replayed.js'
import { summarize, summarizeHistory, textResponse } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

// A call that was running when its process died (kill -9, a lost machine) has no result in the
// history. `agent.continue()` settles it by its tool's `onResume` policy.

const STOPPED =
  'The task stopped before this tool call finished (its process ended); it may or may not have run.'

/** An idempotent payment tool: charges once per idempotency key, counting its runs. */
function chargeTool(options: { needsApproval?: boolean } = {}) {
  const runs: Pick<ToolContext, 'toolCallId' | 'resumed'>[] = []
  const charged = new Set<string>()
  const tool = defineTool({
    name: 'charge',
    description: 'Charges a card',
    parameters: Type.Object({ cents: Type.Integer() }),
    onResume: 'rerun',
    needsApproval: options.needsApproval ?? false,
    execute: ({ cents }, ctx) => {
      runs.push({ toolCallId: ctx.toolCallId, resumed: ctx.resumed })
      if (charged.has(ctx.toolCallId)) return `already charged ${cents} cents (${ctx.toolCallId})`
      charged.add(ctx.toolCallId)
      return `charged ${cents} cents`
    },
  })
  return { tool, runs, charged }
}

/**
 * What a process killed during its tool calls left: the input, then a response calling `charge`
 * (c1) and `read_file` (c2), c1's progress, and no result for either.
 */
const DEAD: HistoryEvent[] = [
  { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Pay and read' }] },
  {
    role: 'assistant',
    id: 'a1',
    createdAt: 2,
    parts: [
      { type: 'tool_call', id: 'c1', name: 'charge', argumentsJson: '{"cents":500}' },
      { type: 'tool_call', id: 'c2', name: 'read_file', argumentsJson: '{"path":"b.txt"}' },
    ],
    stopReason: 'tool_use',
    responseId: 'r0',
  },
  {
    type: 'tool_progress',
    id: 'p1',
    createdAt: 3,
    toolCallId: 'c1',
    toolName: 'charge',
    message: 'contacting the bank',
    siblingToolCallIds: ['c2'],
    responseId: 'r0',
  },
]

/** The approval request of DEAD's c1, as a task that paused for it (or died waiting) wrote it. */
const ASKED_C1: HistoryEvent = {
  type: 'approval_request',
  id: 'q1',
  createdAt: 3,
  toolCallId: 'c1',
  toolName: 'charge',
  arguments: '{"cents":500}',
  responseId: 'r0',
}

/** The end of a task of session `dead` that paused for approval after one turn. */
const PAUSED_METADATA = {
  main: {
    sessionId: 'dead',
    model: 'gpt-4o',
    provider: 'openai-chat',
    usage: {},
    costUsd: 0,
    durationMs: 0,
    turnCount: 1,
  },
  subAgents: [],
}

async function deadSession(h: Harness, records: readonly HistoryEvent[] = DEAD): Promise<void> {
  await h.store.create({ id: 'dead' })
  await h.store.append('dead', records)
}

/**
 * Carries the dead session on (`continue`, or `run` with a new message) with sub-agent `helper`,
 * whose `charge` tool records its runs; the parent's model then answers. The task must complete.
 */
async function carryOnDead(h: Harness, how: 'continue' | 'run') {
  h.server.enqueue(textReply('r1', 'It may not have paid.'))
  const { tool, runs } = chargeTool()
  const helper = defineSubAgent({ name: 'helper', description: 'Pays', tools: [tool] })
  const agent = h.createAgent({ sessionId: 'dead', tools: [helper] })
  const { events, outcome } = await collect(how === 'continue' ? agent.continue() : agent.run('Never mind'))
  expect(outcome.reason).toBe('completed')
  return { agent, events, outcome, runs }
}

/** The session of sub-agent `helper`, run by the dead session's call p1, holding `records`. */
async function childSession(h: Harness, records: readonly HistoryEvent[]): Promise<void> {
  await h.store.create({
    id: 'child',
    parentSessionId: 'dead',
    subAgent: { name: 'helper', parentToolCallId: 'p1' },
  })
  await h.store.append('child', records)
}

/**
 * A session a dead process left in a call that started sub-agent `child`, and another session's
 * sub-agent linked to a call of the same id: never this task's.
 */
async function deadWithStranger(h: Harness): Promise<void> {
  await deadSession(h, [DEAD[0]!, CARRIED_SUB_AGENT[1]!])
  await childSession(h, [{ role: 'user', id: 'cu1', createdAt: 1, parts: [{ type: 'text', text: 'pay' }] }])
  await h.store.create({
    id: 'stranger',
    parentSessionId: 'other',
    subAgent: { name: 'helper', parentToolCallId: 'p1' },
  })
}

/**
 * That sub-agent's session when its parent was carried on: it asked for s1, paused, was carried on
 * with the approval, and its process died while s1 ran.
 */
const CARRIED_CHILD: HistoryEvent[] = [
  { role: 'user', id: 'cu1', createdAt: 1, parts: [{ type: 'text', text: 'pay' }] },
  {
    role: 'assistant',
    id: 'ca1',
    createdAt: 2,
    parts: [{ type: 'tool_call', id: 's1', name: 'charge', argumentsJson: '{"cents":500}' }],
    stopReason: 'tool_use',
    responseId: 'cr0',
  },
  {
    type: 'approval_request',
    id: 'cq1',
    createdAt: 3,
    toolCallId: 's1',
    toolName: 'charge',
    arguments: '{"cents":500}',
    responseId: 'cr0',
  },
  {
    type: 'task_metadata',
    id: 'cm1',
    createdAt: 4,
    metadata: { ...PAUSED_METADATA, main: { ...PAUSED_METADATA.main, sessionId: 'child' } },
  },
  {
    type: 'approval_decision',
    id: 'cd1',
    createdAt: 5,
    toolCallId: 's1',
    toolName: 'charge',
    approved: true,
  },
]

/** A parent paused at its sub-agent's approval request, decided by a continue whose process then died. */
const CARRIED_SUB_AGENT: HistoryEvent[] = [
  DEAD[0]!,
  {
    role: 'assistant',
    id: 'a1',
    createdAt: 2,
    parts: [{ type: 'tool_call', id: 'p1', name: 'helper', argumentsJson: '{"prompt":"pay"}' }],
    stopReason: 'tool_use',
    responseId: 'r0',
  },
  {
    type: 'approval_request',
    id: 'q1',
    createdAt: 3,
    toolCallId: 's1',
    toolName: 'charge',
    arguments: '{"cents":500}',
    responseId: 'r0',
    sessionId: 'child',
    subAgentCall: { toolCallId: 'p1', sessionId: 'child' },
  },
  { type: 'task_metadata', id: 'm1', createdAt: 4, metadata: PAUSED_METADATA },
  {
    type: 'approval_decision',
    id: 'd1',
    createdAt: 5,
    toolCallId: 's1',
    toolName: 'charge',
    approved: true,
    sessionId: 'child',
  },
]

/** The tool messages of the model request that follows the continued calls. */
function toolMessagesSent(h: Harness): unknown[] {
  const body = h.server.requests.at(-1)?.body as { messages: { role: string }[] }
  return body.messages.filter((message) => message.role === 'tool')
}

describe.each(['memory', 'file'] as const)('onResume (%s store)', (kind) => {
  const harness = useHarness(kind)

  test("'rerun' runs the call again with the same id and resumed; 'error' (the default) answers it", async () => {
    const h = harness()
    await deadSession(h)
    const { tool, runs } = chargeTool()
    h.server.enqueue(textReply('r1', 'Paid; b.txt may need another read.'))
    const agent = h.createAgent({ sessionId: 'dead', tools: [tool, readFile] })
    const { events, outcome } = await collect(agent.continue())
    // The calls and their turn are out already (the replay of the history shows them): the task
    // answers them, each call announced once.
    expectOrdered(replayThenLive(DEAD, 'dead', events))
    expect(summarize(events)).toEqual([
      'task_start',
      'tool_result c1 success: charged 500 cents',
      `tool_result c2 error (last): ${STOPPED}`,
      'turn_end',
      ...textResponse('Paid; b.txt may need another read.'),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Paid; b.txt may need another read.',
    ])
    expect(runs).toEqual([{ toolCallId: 'c1', resumed: true }])
    expect(outcome.reason).toBe('completed')

    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Pay and read',
      'assistant tool_use: call c1 charge {"cents":500} | call c2 read_file {"path":"b.txt"}',
      'tool_progress c1: contacting the bank (siblings c2)',
      'tool c1 success: charged 500 cents',
      `tool c2 error: ${STOPPED}`,
      'assistant stop: text "Paid; b.txt may need another read."',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(toolMessagesSent(h)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'charged 500 cents' },
      { role: 'tool', tool_call_id: 'c2', content: STOPPED },
    ])
  })

  test("a new message instead of `continue` answers every call first, 'rerun' ones too, and runs none", async () => {
    const h = harness()
    await deadSession(h)
    const { tool, runs } = chargeTool()
    h.server.enqueue(textReply('r1', 'Nothing was confirmed.'))
    const agent = h.createAgent({ sessionId: 'dead', tools: [tool, readFile] })
    const { events, outcome } = await collect(agent.run('Never mind; what happened?'))
    // The dead task's turn is settled and ends, then the new message opens its own turn.
    expectOrdered(replayThenLive(DEAD, 'dead', events))
    expect(summarize(events)).toEqual([
      'task_start',
      `tool_result c1 error: ${STOPPED}`,
      `tool_result c2 error (last): ${STOPPED}`,
      'turn_end',
      'user_message: Never mind; what happened?',
      ...textResponse('Nothing was confirmed.'),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Nothing was confirmed.',
    ])
    expect(runs).toEqual([])
    expect(outcome.reason).toBe('completed')

    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Pay and read',
      'assistant tool_use: call c1 charge {"cents":500} | call c2 read_file {"path":"b.txt"}',
      'tool_progress c1: contacting the bank (siblings c2)',
      `tool c1 error: ${STOPPED}`,
      `tool c2 error: ${STOPPED}`,
      'user: Never mind; what happened?',
      'assistant stop: text "Nothing was confirmed."',
      'task_metadata turns=1 subAgents=0',
    ])
    const body = h.server.requests.at(-1)?.body as { messages: unknown[] }
    expect(body.messages).toEqual([
      { role: 'user', content: 'Pay and read' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'charge', arguments: '{"cents":500}' } },
          { id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{"path":"b.txt"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: STOPPED },
      { role: 'tool', tool_call_id: 'c2', content: STOPPED },
      { role: 'user', content: 'Never mind; what happened?' },
    ])
  })

  test.each(['continue', 'run'] as const)(
    'after %s, the replay of the dead history then the live events are the replay of the history they leave',
    async (how) => {
      const h = harness()
      await deadSession(h)
      const { tool } = chargeTool()
      h.server.enqueue(textReply('r1', 'Done.'))
      const agent = h.createAgent({ sessionId: 'dead', tools: [tool, readFile] })
      const { events } = await collect(how === 'continue' ? agent.continue() : agent.run('And now?'))
      const history = await agent.history()
      const watched = replayThenLive(DEAD, 'dead', events)
      expectOrdered(watched)
      // (Timestamps aside: the dead records' clock is not the test's.)
      const untimed = (events: unknown[]) => events.map((e) => ({ ...(e as object), timestamp: 0 }))
      expect(untimed(replayedPart(watched))).toEqual(untimed(replayOf(history, 'dead')))
      // Both calls ran at once, so both are announced before the first one's progress.
      expect(summarize(watched).slice(0, 6)).toEqual([
        'user_message: Pay and read',
        'turn_start',
        'response_complete: ',
        'tool_call c1 charge {"cents":500}',
        'tool_call c2 read_file {"path":"b.txt"}',
        'tool_progress c1: contacting the bank (siblings c2)',
      ])
    },
  )

  test('a rerun tool that keys its work on toolCallId does it once across the two runs', async () => {
    const h = harness()
    await deadSession(h)
    const { tool, runs, charged } = chargeTool()
    // The first process had charged before it died: the key is already spent.
    charged.add('c1')
    h.server.enqueue(textReply('r1', 'Paid.'))
    const agent = h.createAgent({ sessionId: 'dead', tools: [tool, readFile] })
    const { events } = await collect(agent.continue())
    expect(summarize(events)).toContain('tool_result c1 success: already charged 500 cents (c1)')
    expect(runs).toEqual([{ toolCallId: 'c1', resumed: true }])
    expect(charged).toEqual(new Set(['c1']))
  })

  test('a call of a task that did not die runs once, with resumed false', async () => {
    const h = harness()
    const { tool, runs } = chargeTool()
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'charge', { cents: 500 })] }))
    h.server.enqueue(textReply('r2', 'Paid.'))
    const agent = h.createAgent({ tools: [tool] })
    const { outcome } = await collect(agent.run('Pay'))
    expect(outcome.reason).toBe('completed')
    expect(runs).toEqual([{ toolCallId: 'c1', resumed: false }])
  })

  test('a rerun call that needs an approval the history lacks is answered, never run unasked', async () => {
    const h = harness()
    // The process died after the response was persisted and before it asked for approval.
    await deadSession(h, DEAD.slice(0, 2))
    const { tool, runs } = chargeTool({ needsApproval: true })
    h.server.enqueue(textReply('r1', 'Not paid.'))
    const agent = h.createAgent({ sessionId: 'dead', tools: [tool, readFile] })
    const { events } = await collect(agent.continue())
    expectOrdered(replayThenLive(DEAD.slice(0, 2), 'dead', events))
    expect(summarize(events).slice(0, 4)).toEqual([
      'task_start',
      `tool_result c1 error: ${STOPPED}`,
      `tool_result c2 error (last): ${STOPPED}`,
      'turn_end',
    ])
    expect(runs).toEqual([])
    expectValidHistory(await agent.history())
  })

  test('a rerun call the user had approved runs again without asking twice', async () => {
    const h = harness()
    await deadSession(h, [
      ...DEAD.slice(0, 2),
      ASKED_C1,
      {
        type: 'approval_decision',
        id: 'd1',
        createdAt: 4,
        toolCallId: 'c1',
        toolName: 'charge',
        approved: true,
      },
    ])
    const { tool, runs } = chargeTool({ needsApproval: true })
    h.server.enqueue(textReply('r1', 'Paid.'))
    const agent = h.createAgent({ sessionId: 'dead', tools: [tool, readFile] })
    const { events, outcome } = await collect(agent.continue())
    const lines = summarize(events)
    expect(lines.filter((line) => line.startsWith('tool_approval'))).toEqual([])
    expect(lines).toContain('tool_result c1 success: charged 500 cents')
    expect(runs).toEqual([{ toolCallId: 'c1', resumed: true }])
    expect(outcome.reason).toBe('completed')
    expectValidHistory(await agent.history())
  })

  test.each(['continue', 'run'] as const)(
    'a call approved by a continue whose process then died is settled by %s, never left without a result',
    async (how) => {
      const h = harness()
      // The task paused for c1's approval and ended (task_metadata); a `continue` in another process
      // recorded the decision, started c1, and died before its result.
      const paused: HistoryEvent[] = [
        ...DEAD.slice(0, 2),
        ASKED_C1,
        {
          role: 'tool',
          id: 't2',
          createdAt: 4,
          toolCallId: 'c2',
          toolName: 'read_file',
          status: 'success',
          outputText: 'b',
          parts: [],
        },
        { type: 'task_metadata', id: 'm1', createdAt: 5, metadata: PAUSED_METADATA },
        {
          type: 'approval_decision',
          id: 'd1',
          createdAt: 6,
          toolCallId: 'c1',
          toolName: 'charge',
          approved: true,
        },
      ]
      await deadSession(h, paused)
      const { tool, runs } = chargeTool({ needsApproval: true })
      h.server.enqueue(textReply('r1', 'Paid.'))
      const agent = h.createAgent({ sessionId: 'dead', tools: [tool, readFile] })
      const { events, outcome } = await collect(how === 'continue' ? agent.continue() : agent.run('Status?'))
      expect(outcome.reason).toBe('completed')
      expectOrdered(replayThenLive(paused, 'dead', events))
      const history = await agent.history()
      expectValidHistory(history)
      // A rerun tool the user approved runs again on continue; a new message answers it, running nothing.
      if (how === 'continue') {
        expect(runs).toEqual([{ toolCallId: 'c1', resumed: true }])
        expect(summarizeHistory(history)[6]).toBe('tool c1 success: charged 500 cents')
      } else {
        expect(runs).toEqual([])
        expect(summarizeHistory(history)[6]).toBe(`tool c1 error: ${STOPPED}`)
      }
      expect(replayedPart(events)).toEqual(
        replayOf(history, 'dead').slice(replayOf(paused, 'dead').length - 1),
      )
    },
  )

  test("a sub-agent's call decided by a continue whose process then died: the call that ran it is answered", async () => {
    const h = harness()
    const paused = CARRIED_SUB_AGENT
    await deadSession(h, paused)
    h.server.enqueue(textReply('r1', 'It may not have paid.'))
    const helper = defineSubAgent({ name: 'helper', description: 'Pays', tools: [chargeTool().tool] })
    const agent = h.createAgent({ sessionId: 'dead', tools: [helper] })
    const { events, outcome } = await collect(agent.continue())
    expect(outcome.reason).toBe('completed')
    expectOrdered(replayThenLive(paused, 'dead', events))
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)[5]).toBe(`tool p1 error: ${STOPPED}`)
  })

  test.each(['continue', 'run'] as const)(
    "a sub-agent whose process died while its approved call ran: the parent's %s settles the sub-agent's call too",
    async (how) => {
      const h = harness()
      const paused = CARRIED_SUB_AGENT
      await deadSession(h, paused)
      // The sub-agent's own session: it asked for s1, paused, was carried on with the approval, and
      // its process died while s1 ran.
      const child = CARRIED_CHILD
      await childSession(h, child)
      const { agent, events, runs } = await carryOnDead(h, how)
      // Nothing runs again: the parent's call is answered, and so is the sub-agent's.
      expect(runs).toEqual([])
      // What a watcher saw of both sessions (the replay of what the dead process left), then this
      // task's events: one valid sequence for each session.
      expectOrdered([...replayThenLive(child, 'child', []), ...replayThenLive(paused, 'dead', events)])
      const history = await agent.history()
      expectValidHistory(history)
      expect(summarizeHistory(history)[5]).toBe(`tool p1 error: ${STOPPED}`)
      const settled = await h.store.read('child')
      expectValidHistory(settled)
      expect(summarizeHistory(settled).slice(5)).toEqual([
        `tool s1 error: ${STOPPED}`,
        expect.stringMatching(/^error: /),
        'task_metadata turns=0 subAgents=0',
      ])
      // The sub-agent's events come before the parent's result, as a sub-agent's end always does.
      const childEnd = events.findIndex((e) => e.type === 'task_finish' && e.sessionId === 'child')
      const parentResult = events.findIndex((e) => e.type === 'tool_result' && e.toolCallId === 'p1')
      expect(childEnd).toBeGreaterThan(-1)
      expect(childEnd).toBeLessThan(parentResult)
    },
  )

  test.each(['continue', 'run'] as const)(
    "a sub-agent that never paused, whose process died mid-call: the parent's %s settles it and counts it",
    async (how) => {
      const h = harness()
      // The parent called the sub-agent (p1) and died while it ran: no record of the child in the
      // parent's history, only the child's own session, linked by its metadata.
      const parent: HistoryEvent[] = [DEAD[0]!, CARRIED_SUB_AGENT[1]!]
      await deadSession(h, parent)
      const child: HistoryEvent[] = [
        { role: 'user', id: 'cu1', createdAt: 1, parts: [{ type: 'text', text: 'pay' }] },
        {
          role: 'assistant',
          id: 'ca1',
          createdAt: 2,
          parts: [{ type: 'tool_call', id: 's1', name: 'charge', argumentsJson: '{"cents":500}' }],
          stopReason: 'tool_use',
          responseId: 'cr0',
          usage: { inputTokens: 70, outputTokens: 5 },
          costUsd: 0.25,
        },
      ]
      await childSession(h, child)
      const { agent, events, outcome, runs } = await carryOnDead(h, how)
      expect(runs).toEqual([])
      expectOrdered([...replayThenLive(child, 'child', []), ...replayThenLive(parent, 'dead', events)])
      expect(summarizeHistory(await agent.history())[2]).toBe(`tool p1 error: ${STOPPED}`)
      // The child's session ends: its dangling call is answered and its task has an end.
      const settled = await h.store.read('child')
      expectValidHistory(settled)
      expect(summarizeHistory(settled).slice(2)).toEqual([
        `tool s1 error: ${STOPPED}`,
        expect.stringMatching(/^error: /),
        'task_metadata turns=0 subAgents=0',
      ])
      const childEnd = events.findIndex((e) => e.type === 'task_finish' && e.sessionId === 'child')
      const parentResult = events.findIndex((e) => e.type === 'tool_result' && e.toolCallId === 'p1')
      expect(childEnd).toBeGreaterThan(-1)
      expect(childEnd).toBeLessThan(parentResult)
      // The settled child is one of the sub-agents the parent's task ran.
      expect(outcome.metadata.subAgents.map((m) => [m.sessionId, m.subAgentName])).toEqual([
        ['child', 'helper'],
      ])
      // The parent's result links the child, so its replay shows the child's whole session (what
      // ran before the crash, then its settling) before that result, as the export does.
      const result = (await agent.history()).find((r) => 'role' in r && r.role === 'tool')
      expect(result).toMatchObject({ uiExtra: { type: 'session', sessionId: 'child' } })
      const replay = await replaySession(h.store, 'dead')
      expectOrdered(replay)
      const childEvents = replay.filter((e) => e.sessionId === 'child')
      expect(childEvents.map((e) => e.type)).toEqual(replayOf(settled, 'child').map((e) => (e as Event).type))
      const replayedResult = replay.findIndex((e) => e.type === 'tool_result' && e.toolCallId === 'p1')
      expect(replay.findLastIndex((e) => e.sessionId === 'child')).toBeLessThan(replayedResult)
    },
  )

  test("a sub-agent that finished before its parent's process died is linked, and left as it is", async () => {
    const h = harness()
    const parent: HistoryEvent[] = [DEAD[0]!, CARRIED_SUB_AGENT[1]!]
    await deadSession(h, parent)
    const child: HistoryEvent[] = [
      { role: 'user', id: 'cu1', createdAt: 1, parts: [{ type: 'text', text: 'pay' }] },
      {
        role: 'assistant',
        id: 'ca1',
        createdAt: 2,
        parts: [{ type: 'text', text: 'Paid.' }],
        stopReason: 'stop',
        responseId: 'cr0',
      },
      {
        type: 'task_metadata',
        id: 'cm1',
        createdAt: 3,
        metadata: { ...PAUSED_METADATA, main: { ...PAUSED_METADATA.main, sessionId: 'child' } },
      },
    ]
    await childSession(h, child)
    h.server.enqueue(textReply('r1', 'It may have paid.'))
    const helper = defineSubAgent({ name: 'helper', description: 'Pays', tools: [] })
    const agent = h.createAgent({ sessionId: 'dead', tools: [helper] })
    const { outcome } = await collect(agent.continue())
    expect(outcome.reason).toBe('completed')
    expect(await h.store.read('child')).toEqual(child)
    const result = (await agent.history()).find((r) => 'role' in r && r.role === 'tool')
    expect(result).toMatchObject({ uiExtra: { type: 'session', sessionId: 'child' } })
    const replay = await replaySession(h.store, 'dead')
    expectOrdered(replay)
    expect(replay.filter((e) => e.sessionId === 'child').map((e) => e.type)).toEqual(
      replayOf(child, 'child').map((e) => (e as Event).type),
    )
  })

  test.each(['continue', 'run'] as const)(
    "a sub-agent session whose dead writer's lease has not expired yet: %s is refused before it starts",
    async (how) => {
      const h = harness()
      const dead = [DEAD[0]!, CARRIED_SUB_AGENT[1]!]
      await deadSession(h, dead)
      const child: HistoryEvent[] = [
        { role: 'user', id: 'cu1', createdAt: 1, parts: [{ type: 'text', text: 'pay' }] },
      ]
      await childSession(h, child)
      // The parent's lease expired (the task can take it) but the sub-agent's, taken later by the
      // dead process and renewed later, has not: what settling the sub-agent needs is not free yet.
      const held = await h.store.acquire('child')
      const helper = defineSubAgent({ name: 'helper', description: 'Pays', tools: [] })
      const agent = h.createAgent({ sessionId: 'dead', tools: [helper] })
      const run = how === 'continue' ? agent.continue() : agent.run('Never mind')
      const events = run[Symbol.asyncIterator]()
      // No `task_start`: a host that answers once the task started (the web example's 202) is told first.
      await expect(events.next()).rejects.toMatchObject({ code: 'session_locked', sessionId: 'child' })
      await expect(run.done).rejects.toMatchObject({ code: 'session_locked' })
      expect(await h.store.read('dead')).toEqual(dead)
      expect(await h.store.read('child')).toEqual(child)
      // Once that lease is given back, the same request carries the task on.
      await held.release()
      h.server.enqueue(textReply('r1', 'It may not have paid.'))
      const { outcome } = await collect(how === 'continue' ? agent.continue() : agent.run('Never mind'))
      expect(outcome.reason).toBe('completed')
      expect(outcome.metadata.subAgents.map((m) => m.sessionId)).toEqual(['child'])
    },
  )

  test("finding the sub-agents a dead call started lists the parent's sessions only", async () => {
    const h = harness()
    await deadWithStranger(h)
    const lists: unknown[] = []
    const store: SessionStore = {
      ...h.store,
      list: (options) => {
        lists.push(options)
        return h.store.list(options)
      },
    }
    h.server.enqueue(textReply('r1', 'It may not have paid.'))
    const helper = defineSubAgent({ name: 'helper', description: 'Pays', tools: [] })
    const agent = h.createAgent({ sessionId: 'dead', tools: [helper], store })
    const { outcome } = await collect(agent.continue())
    expect(outcome.reason).toBe('completed')
    // Once, to check the sub-agents are free before the task starts; settling them uses that list.
    expect(lists).toEqual([{ parentSessionId: 'dead' }])
    expect(outcome.metadata.subAgents.map((m) => m.sessionId)).toEqual(['child'])
    expect(await h.store.read('stranger')).toEqual([])
  })

  test("a dead call's sub-agent session is read once to check and settle it, then by its own task", async () => {
    const h = harness()
    await deadWithStranger(h)
    const reads: string[] = []
    const store: SessionStore = {
      ...h.store,
      read: (sessionId) => {
        reads.push(sessionId)
        return h.store.read(sessionId)
      },
      readBatches: undefined,
    }
    h.server.enqueue(textReply('r1', 'It may not have paid.'))
    const helper = defineSubAgent({ name: 'helper', description: 'Pays', tools: [] })
    const agent = h.createAgent({ sessionId: 'dead', tools: [helper], store })
    const { outcome } = await collect(agent.continue())
    expect(outcome.reason).toBe('completed')
    expect(outcome.metadata.subAgents.map((m) => m.sessionId)).toEqual(['child'])
    // The parent's and the child's journals read their sessions as they open them; before that the
    // child is read once, to check it is free and whether its task ended.
    expect(reads.filter((id) => id === 'child')).toEqual(['child', 'child'])
    expect(summarizeHistory(await h.store.read('child')).at(-1)).toBe('task_metadata turns=0 subAgents=0')
  })

  test("a dead call's sub-agent's own dead sub-agent is listed and read once too", async () => {
    const h = harness()
    await deadSession(h, [DEAD[0]!, CARRIED_SUB_AGENT[1]!])
    // The child called sub-agent `inner` (g1) and died with it: the grandchild's call s1 has no result.
    await childSession(h, [
      { role: 'user', id: 'cu1', createdAt: 1, parts: [{ type: 'text', text: 'pay' }] },
      {
        role: 'assistant',
        id: 'ca1',
        createdAt: 2,
        parts: [{ type: 'tool_call', id: 'g1', name: 'inner', argumentsJson: '{"prompt":"pay"}' }],
        stopReason: 'tool_use',
        responseId: 'cr0',
      },
    ])
    await h.store.create({
      id: 'grandchild',
      parentSessionId: 'child',
      subAgent: { name: 'inner', parentToolCallId: 'g1' },
    })
    await h.store.append('grandchild', CARRIED_CHILD.slice(0, 2))
    const reads: string[] = []
    const lists: unknown[] = []
    const store: SessionStore = {
      ...h.store,
      read: (sessionId) => {
        reads.push(sessionId)
        return h.store.read(sessionId)
      },
      readBatches: undefined,
      list: (options) => {
        lists.push(options)
        return h.store.list(options)
      },
    }
    h.server.enqueue(textReply('r1', 'It may not have paid.'))
    const helper = defineSubAgent({ name: 'helper', description: 'Pays', tools: [] })
    const agent = h.createAgent({ sessionId: 'dead', tools: [helper], store })
    const { outcome } = await collect(agent.continue())
    expect(outcome.reason).toBe('completed')
    // Each session a dead call left is listed once, for the sub-agents its own dead calls ran.
    expect(lists).toEqual([
      { parentSessionId: 'dead' },
      { parentSessionId: 'child' },
      { parentSessionId: 'grandchild' },
    ])
    expect(reads.filter((id) => id === 'grandchild')).toEqual(['grandchild', 'grandchild'])
    // Both settled: the child counts the grandchild it settled.
    const ends = await Promise.all(
      ['child', 'grandchild'].map(async (id) => {
        const settled = await h.store.read(id)
        expectValidHistory(settled)
        return summarizeHistory(settled).at(-1)
      }),
    )
    expect(ends).toEqual(['task_metadata turns=0 subAgents=1', 'task_metadata turns=0 subAgents=0'])
  })

  test('a store whose list takes no options still finds them', async () => {
    const h = harness()
    await deadWithStranger(h)
    // A store written before list took options: it lists every session whatever it is passed.
    const store: SessionStore = { ...h.store, list: () => h.store.list() }
    h.server.enqueue(textReply('r1', 'It may not have paid.'))
    const helper = defineSubAgent({ name: 'helper', description: 'Pays', tools: [] })
    const agent = h.createAgent({ sessionId: 'dead', tools: [helper], store })
    const { outcome } = await collect(agent.continue())
    expect(outcome.reason).toBe('completed')
    expect(outcome.metadata.subAgents.map((m) => m.sessionId)).toEqual(['child'])
    expect(await h.store.read('stranger')).toEqual([])
  })

  test('a rerun call settles the sub-agent its dead run started before it starts a new one', async () => {
    const h = harness()
    await deadSession(h, [
      DEAD[0]!,
      {
        role: 'assistant',
        id: 'a1',
        createdAt: 2,
        parts: [{ type: 'tool_call', id: 'p1', name: 'delegate', argumentsJson: '{}' }],
        stopReason: 'tool_use',
        responseId: 'r0',
      },
    ])
    await childSession(h, [{ role: 'user', id: 'cu1', createdAt: 1, parts: [{ type: 'text', text: 'pay' }] }])
    const delegate = defineTool({
      name: 'delegate',
      description: 'Delegates the payment',
      parameters: Type.Object({}),
      onResume: 'rerun',
      execute: async (_args, ctx) => (await ctx.runSubAgent({ name: 'helper' }, 'pay')).text,
    })
    h.server.enqueue(textReply('cr1', 'Paid.'))
    h.server.enqueue(textReply('r1', 'Done.'))
    const agent = h.createAgent({ sessionId: 'dead', tools: [delegate] })
    const { outcome } = await collect(agent.continue())
    expect(outcome.reason).toBe('completed')
    const settled = await h.store.read('child')
    expectValidHistory(settled)
    expect(summarizeHistory(settled).slice(1)).toEqual([
      expect.stringMatching(/^error: /),
      'task_metadata turns=0 subAgents=0',
    ])
    // The old child first, then the one the rerun started.
    expect(outcome.metadata.subAgents.map((m) => m.sessionId)).toEqual(['child', expect.any(String)])
    expect(outcome.metadata.subAgents[1]?.sessionId).not.toBe('child')
  })

  test("a carried sub-agent settled after its process died is counted in the parent's task_metadata", async () => {
    const h = harness()
    await deadSession(h, CARRIED_SUB_AGENT)
    await childSession(h, CARRIED_CHILD)
    h.server.enqueue(textReply('r1', 'It may not have paid.'))
    const helper = defineSubAgent({ name: 'helper', description: 'Pays', tools: [chargeTool().tool] })
    const agent = h.createAgent({ sessionId: 'dead', tools: [helper] })
    const { events, outcome } = await collect(agent.continue())
    expect(outcome.reason).toBe('completed')
    const childMetadata = events.find((e) => e.type === 'task_metadata' && e.sessionId === 'child')
    expect(childMetadata).toBeDefined()
    expect(outcome.metadata.subAgents).toEqual([
      (childMetadata as { metadata: { main: unknown } }).metadata.main,
    ])
    const parentRecord = (await agent.history()).findLast(
      (record) => !('role' in record) && record.type === 'task_metadata',
    )
    expect(parentRecord).toMatchObject({ metadata: { subAgents: [{ sessionId: 'child' }] } })
  })

  test.each(['continue', 'run'] as const)(
    'a process that died while a sibling ran and a call awaited approval: %s goes on with its open turn, as the replay shows it',
    async (how) => {
      const h = harness()
      const dead: HistoryEvent[] = [...DEAD.slice(0, 2), ASKED_C1]
      await deadSession(h, dead)
      const { tool, runs } = chargeTool({ needsApproval: true })
      h.server.enqueue(textReply('r1', 'Not paid.'))
      const agent = h.createAgent({ sessionId: 'dead', tools: [tool, readFile] })
      const { events, outcome } = await collect(
        how === 'continue'
          ? agent.continue({ approvals: [{ toolCallId: 'c1', approved: false }] })
          : agent.run('Never mind'),
      )
      expect(outcome.reason).toBe('completed')
      expect(runs).toEqual([])
      // The dead task's events (what a watcher saw: the replay of what it left, its turn still
      // open), then this task's, are one valid sequence: the replay of the history they leave.
      const watched = replayThenLive(dead, 'dead', events)
      expectOrdered(watched)
      const history = await agent.history()
      expectValidHistory(history)
      // (Timestamps aside: the dead records' clock is not the test's.)
      const untimed = (events: unknown[]) => events.map((e) => ({ ...(e as object), timestamp: 0 }))
      expect(untimed(replayedPart(watched))).toEqual(untimed(replayOf(history, 'dead')))
      const denial =
        how === 'continue' ? 'denied by the user' : 'denied by the user: the user sent a new message instead'
      expect(summarize(events).slice(1, 5)).toEqual([
        `tool_approval_decision c1 denied${how === 'continue' ? '' : ': the user sent a new message instead'}`,
        'tool_call c1 charge {"cents":500}',
        `tool_result c1 error: ${denial}`,
        `tool_result c2 error (last): ${STOPPED}`,
      ])
    },
  )

  test('approving a call after the process died while its sibling ran settles the sibling too', async () => {
    const h = harness()
    // c1 awaited approval while c2 ran; the process died before c2's result.
    const dead = [...DEAD.slice(0, 2), ASKED_C1]
    await deadSession(h, dead)
    const { tool, runs } = chargeTool({ needsApproval: true })
    h.server.enqueue(textReply('r1', 'Paid; b.txt may need another read.'))
    const agent = h.createAgent({ sessionId: 'dead', tools: [tool, readFile] })
    const { events, outcome } = await collect(
      agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }] }),
    )
    expect(outcome.reason).toBe('completed')
    // The task goes on with the turn the dead process left open: no second `turn_start`, and c2
    // (announced by the dead process) is not announced again.
    const watched = replayThenLive(dead, 'dead', events)
    expectOrdered(watched)
    expect(summarize(events).slice(0, 6)).toEqual([
      'task_start',
      'tool_approval_decision c1 approved',
      'tool_call c1 charge {"cents":500}',
      'tool_result c1 success: charged 500 cents',
      `tool_result c2 error (last): ${STOPPED}`,
      'turn_end',
    ])
    expect(runs).toEqual([{ toolCallId: 'c1', resumed: false }])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history).slice(2, 6)).toEqual([
      'approval_request c1 charge {"cents":500}',
      'approval_decision c1 approved',
      'tool c1 success: charged 500 cents',
      `tool c2 error: ${STOPPED}`,
    ])
    expect(toolMessagesSent(h)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'charged 500 cents' },
      { role: 'tool', tool_call_id: 'c2', content: STOPPED },
    ])
  })
})

describe('onResume, when the store fails', () => {
  const harness = useHarness('memory')

  test('a continued task that cannot persist still answers the calls it carried on and ends their turn', async () => {
    const h = harness()
    await deadSession(h)
    const full = withAppends(h.store, () => Promise.reject(new Error('disk full')))
    const { tool } = chargeTool()
    const agent = h.createAgent({ store: full, sessionId: 'dead', tools: [tool, readFile] })
    const events: Event[] = []
    const run = agent.continue()
    await expect(
      (async () => {
        for await (const event of run) events.push(event)
      })(),
    ).rejects.toThrow('disk full')
    expectOrdered(replayThenLive(DEAD, 'dead', events))
    expect(summarize(events)).toEqual([
      'task_start',
      'tool_result c1 error: The task failed before this tool call finished: disk full',
      'tool_result c2 error: The task failed before this tool call finished: disk full',
      'error: disk full',
      'turn_end',
      'task_finish error: ',
    ])
  })
})

describe('a dead task whose last response reuses an id an earlier turn answered', () => {
  const harness = useHarness()
  // As Gemini's calls get ids when it sends none (`call_<name>_<n>`), the same in every turn.
  const REUSED: HistoryEvent[] = [
    { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Read twice' }] },
    {
      role: 'assistant',
      id: 'a1',
      createdAt: 2,
      parts: [
        { type: 'tool_call', id: 'call_read_file_0', name: 'read_file', argumentsJson: '{"path":"a.txt"}' },
      ],
      stopReason: 'tool_use',
    },
    {
      role: 'tool',
      id: 't1',
      createdAt: 3,
      toolCallId: 'call_read_file_0',
      toolName: 'read_file',
      status: 'success',
      outputText: 'contents of a.txt',
      parts: [],
    },
    {
      role: 'assistant',
      id: 'a2',
      createdAt: 4,
      parts: [
        { type: 'tool_call', id: 'call_read_file_0', name: 'read_file', argumentsJson: '{"path":"b.txt"}' },
      ],
      stopReason: 'tool_use',
    },
  ]

  test.each(['continue', 'a new message'] as const)('%s answers the last call', async (how) => {
    const h = harness()
    await deadSession(h, REUSED)
    h.server.enqueue(textReply('r1', 'Done.'))
    const agent = h.createAgent({ sessionId: 'dead', tools: [readFile] })
    const { outcome } = await collect(how === 'continue' ? agent.continue() : agent.run('And now?'))
    expect(outcome.reason).toBe('completed')
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)[4]).toBe(`tool call_read_file_0 error: ${STOPPED}`)
  })
})

describe('a dead call whose id an earlier, approved call had', () => {
  const harness = useHarness()
  const charge = (id: string, cents: number) => ({
    role: 'assistant' as const,
    id: `a${cents}`,
    createdAt: cents,
    parts: [{ type: 'tool_call' as const, id, name: 'charge', argumentsJson: `{"cents":${cents}}` }],
    stopReason: 'tool_use' as const,
  })
  // The second call's process died before it could ask for approval: it was never approved.
  const UNASKED: HistoryEvent[] = [
    { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Pay twice' }] },
    charge('call_charge_0', 100),
    {
      type: 'approval_request',
      id: 'q1',
      createdAt: 101,
      toolCallId: 'call_charge_0',
      toolName: 'charge',
      arguments: '{"cents":100}',
    },
    {
      type: 'approval_decision',
      id: 'd1',
      createdAt: 102,
      toolCallId: 'call_charge_0',
      toolName: 'charge',
      approved: true,
    },
    {
      role: 'tool',
      id: 't1',
      createdAt: 103,
      toolCallId: 'call_charge_0',
      toolName: 'charge',
      status: 'success',
      outputText: 'charged 100 cents',
      parts: [],
    },
    charge('call_charge_0', 900),
  ]

  test('is not run again on continue: it was never approved', async () => {
    const h = harness()
    await deadSession(h, UNASKED)
    h.server.enqueue(textReply('r1', 'Done.'))
    const { tool, runs } = chargeTool({ needsApproval: true })
    const agent = h.createAgent({ sessionId: 'dead', tools: [tool] })
    const { outcome } = await collect(agent.continue())
    expect(outcome.reason).toBe('completed')
    expect(runs).toEqual([])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)[6]).toBe(`tool call_charge_0 error: ${STOPPED}`)
  })
})

describe('a rerun call the user interrupts before its tool is called again', () => {
  const harness = useHarness()

  /** DEAD's c1 alone: the dead process may have charged. */
  const DEAD_C1: HistoryEvent[] = [
    DEAD[0]!,
    {
      role: 'assistant',
      id: 'a1',
      createdAt: 2,
      parts: [{ type: 'tool_call', id: 'c1', name: 'charge', argumentsJson: '{"cents":500}' }],
      stopReason: 'tool_use',
      responseId: 'r0',
    },
  ]

  /** A rerun `charge` whose `needsApproval` is `check`, counting its runs. */
  function checkedCharge(check: (signal: AbortSignal) => boolean | Promise<boolean>) {
    let runs = 0
    const tool = defineTool({
      name: 'charge',
      description: 'Charges a card',
      parameters: Type.Object({ cents: Type.Integer() }),
      onResume: 'rerun',
      needsApproval: (_args, ctx) => check(ctx.signal),
      execute: () => {
        runs++
        return 'charged'
      },
    })
    return { tool, runs: () => runs }
  }

  test('while its needsApproval check ignores its signal: the task ends at once, and the call keeps "may or may not have run"', async () => {
    const h = harness()
    await deadSession(h, DEAD_C1)
    const controller = new AbortController()
    const { tool, runs } = checkedCharge(() => {
      controller.abort()
      return new Promise<boolean>(() => {})
    })
    const agent = h.createAgent({ sessionId: 'dead', tools: [tool] })
    const ended = collect(agent.continue({ signal: controller.signal }))
    expect(await Promise.race([ended, delay(2000).then(() => 'hung')])).not.toBe('hung')
    const { events, outcome } = await ended
    expectOrdered(replayThenLive(DEAD_C1, 'dead', events))
    expect(outcome.reason).toBe('aborted')
    // Read as "interrupted before it ran", the model would charge again under a new call id.
    // As for a dead call whose tool says 'error': the interrupt stopped nothing that ran.
    expect(summarize(events)).toEqual([
      'task_start',
      `tool_result c1 error (last): ${STOPPED}`,
      'turn_end',
      'interrupt',
      'task_metadata turns=0 subAgents=0',
      'task_finish aborted: ',
    ])
    expect(runs()).toBe(0)
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history).slice(2)).toEqual([
      `tool c1 error: ${STOPPED}`,
      'interrupt',
      'task_metadata turns=0 subAgents=0',
    ])
  })

  test('while beforeToolCall runs for it: the call keeps "may or may not have run"', async () => {
    const h = harness()
    await deadSession(h, DEAD_C1)
    const controller = new AbortController()
    const { tool, runs } = checkedCharge(() => false)
    const agent = h.createAgent({
      sessionId: 'dead',
      tools: [tool],
      hooks: {
        beforeToolCall: () => {
          controller.abort()
          return new Promise<undefined>(() => {})
        },
      },
    })
    const { events, outcome } = await collect(agent.continue({ signal: controller.signal }))
    expectOrdered(replayThenLive(DEAD_C1, 'dead', events))
    expect(outcome.reason).toBe('aborted')
    expect(summarize(events).slice(0, 3)).toEqual([
      'task_start',
      `tool_result c1 error (last): ${STOPPED}`,
      'interrupt',
    ])
    expect(runs()).toBe(0)
    expectValidHistory(await agent.history())
  })

  test('once its tool was called again, it reads as interrupted while it ran', async () => {
    const h = harness()
    await deadSession(h, DEAD_C1)
    const controller = new AbortController()
    const charge = defineTool({
      name: 'charge',
      description: 'Charges a card',
      parameters: Type.Object({ cents: Type.Integer() }),
      onResume: 'rerun',
      execute: () => {
        controller.abort()
        return new Promise<string>(() => {})
      },
    })
    const agent = h.createAgent({ sessionId: 'dead', tools: [charge] })
    const { events, outcome } = await collect(agent.continue({ signal: controller.signal }))
    expect(outcome.reason).toBe('aborted')
    expect(summarize(events)[1]).toBe(
      'tool_result c1 error (last): The user interrupted this tool call before it finished.',
    )
    expectValidHistory(await agent.history())
  })
})

describe('a rerun call whose tools setTools swaps while its needsApproval check runs', () => {
  const harness = useHarness()

  test('runs with the tool that was asked, never with one no one was asked about', async () => {
    const h = harness()
    await deadSession(h, DEAD.slice(0, 2))
    const ran: string[] = []
    let agent: ReturnType<typeof h.createAgent> | undefined
    const guarded = defineTool({
      name: 'charge',
      description: 'Charges a card, once the user approved',
      parameters: Type.Object({ cents: Type.Integer() }),
      onResume: 'rerun',
      needsApproval: true,
      execute: () => {
        ran.push('guarded')
        return 'charged by the guarded tool'
      },
    })
    const checked = defineTool({
      name: 'charge',
      description: 'Charges a card',
      parameters: Type.Object({ cents: Type.Integer() }),
      onResume: 'rerun',
      needsApproval: async () => {
        agent?.setTools([guarded, readFile])
        return false
      },
      execute: () => {
        ran.push('checked')
        return 'charged'
      },
    })
    h.server.enqueue(textReply('r1', 'Paid.'))
    agent = h.createAgent({ sessionId: 'dead', tools: [checked, readFile] })
    const { outcome } = await collect(agent.continue())
    expect(ran).toEqual(['checked'])
    expect(outcome.reason).toBe('completed')
    expectValidHistory(await agent.history())
  })
})
