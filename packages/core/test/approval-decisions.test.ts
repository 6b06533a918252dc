import {
  AgentError,
  type ApprovalDecision,
  defineSubAgent,
  defineTool,
  type NeedsApproval,
  pendingApprovals,
} from '@kode/core'
import type { Event } from '@kode/protocol'
import type { RecordedRequest, ScriptedResponse } from '@kode/providers/testing'
import { deriveReplayEvents, replaySession } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, type Harness, useHarness } from './helpers/harness.js'
import { expectValidHistory } from './helpers/history-checks.js'
import { withAppends } from './helpers/recording-store.js'
import { replayedPart } from './helpers/replayed.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'

type Messages = { role: string; content?: unknown }[]

/** A `write_file` tool that records the paths it wrote; it asks for approval unless told otherwise. */
function writeTool(needsApproval: NeedsApproval<{ path: string }> = true) {
  const written: string[] = []
  const tool = defineTool({
    name: 'write_file',
    description: 'Writes a file',
    parameters: Type.Object({ path: Type.String() }),
    needsApproval,
    execute: ({ path }) => {
      written.push(path)
      return `wrote ${path}`
    },
  })
  return { tool, written }
}

/**
 * Some models number their calls alike from session to session: two sub-agents of one response,
 * each asking to write its file, both call their write `w1`. The parent's own write is `w1` too.
 */
function pausedTwice(h: Harness, ownWrite: boolean) {
  const { tool: writeFile, written } = writeTool()
  const writer = defineSubAgent({
    name: 'writer',
    description: 'Writes files',
    system: 'You write.',
    tools: [writeFile],
  })
  h.server.handle((request: RecordedRequest): ScriptedResponse => {
    const messages = (request.body as { messages: Messages }).messages
    const last = messages.at(-1)!
    if (messages[0]?.content === 'You write.') {
      if (last.role === 'tool') return textReply('rc2', `Writer: ${String(last.content)}`)
      return chatStream({
        id: 'rc1',
        steps: [call('w1', 'write_file', { path: String(messages[1]?.content) })],
      })
    }
    if (last.role === 'tool') return textReply('rp2', 'All done.')
    return chatStream({
      id: 'rp1',
      steps: [
        call('p1', 'writer', { prompt: 'a.txt' }),
        call('p2', 'writer', { prompt: 'b.txt' }),
        ...(ownWrite ? [call('w1', 'write_file', { path: 'c.txt' })] : []),
      ],
    })
  })
  const agent = h.createAgent({ tools: ownWrite ? [writer, writeFile] : [writer] })
  return { agent, written }
}

describe('pending calls that share a tool call id', () => {
  const harness = useHarness('file')

  test('two sub-agents paused at the same id are each listed, and decided by session', async () => {
    const h = harness()
    const { agent, written } = pausedTwice(h, false)
    const first = await collect(agent.run('Write a and b'))
    expect(first.outcome.reason).toBe('awaiting_approval')
    const pending = first.outcome.pendingApprovals!
    expect(pending).toEqual([
      { toolCallId: 'w1', toolName: 'write_file', arguments: '{"path":"a.txt"}', sessionId: 'id3' },
      { toolCallId: 'w1', toolName: 'write_file', arguments: '{"path":"b.txt"}', sessionId: 'id4' },
    ])
    expect(pendingApprovals(await agent.history())).toEqual(pending)

    // Without the session, a decision on w1 could be either: refused, and nothing runs.
    const error = await agent
      .continue({ approvals: [{ toolCallId: 'w1', approved: true }] })
      .done.catch((e: unknown) => e)
    expect(AgentError.is(error) && error.code).toBe('invalid_options')
    const both = [
      { toolCallId: 'w1', approved: true },
      { toolCallId: 'w1', approved: false },
    ]
    const twice = await agent.continue({ approvals: both }).done.catch((e: unknown) => e)
    expect(AgentError.is(twice) && twice.code).toBe('invalid_options')
    expect(written).toEqual([])

    const { outcome, events } = await collect(
      agent.continue({
        approvals: [
          { toolCallId: 'w1', approved: true, sessionId: 'id3' },
          { toolCallId: 'w1', approved: false, reason: 'not b', sessionId: 'id4' },
        ],
      }),
    )
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual(['a.txt'])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history).slice(4)).toEqual([
      'task_metadata turns=1 subAgents=2',
      'approval_decision w1 in id3 approved',
      'approval_decision w1 in id4 denied: not b',
      'tool p1 success: Writer: wrote a.txt',
      'tool p2 success: Writer: denied by the user: not b',
      'assistant stop: text "All done."',
      'task_metadata turns=1 subAgents=2',
    ])
    expect(pendingApprovals(history)).toEqual([])
    // Session by session (the two sub-agents ran at once, so live interleaves them), the events
    // of both tasks are what the replay of the sessions shows, the sub-agents' inline.
    const replay = await replaySession(h.store, agent.sessionId)
    const live = replayedPart([...first.events, ...events]) as Event[]
    for (const session of [agent.sessionId, 'id3', 'id4']) {
      const of = (list: Event[]) => summarize(list.filter((event) => event.sessionId === session))
      expect(of(replay)).toEqual(of(live))
    }
    expect(pendingApprovals(await h.store.read('id3'))).toEqual([])
    expect(pendingApprovals(await h.store.read('id4'))).toEqual([])
  })

  test("a parent's own call and a sub-agent's with one id: the parent's is named by its own session", async () => {
    const h = harness()
    const { agent, written } = pausedTwice(h, true)
    const first = await collect(agent.run('Write a, b and c'))
    const pending = first.outcome.pendingApprovals!
    expect(pending.map((p) => [p.toolCallId, p.arguments, p.sessionId])).toEqual([
      ['w1', '{"path":"c.txt"}', undefined],
      ['w1', '{"path":"a.txt"}', 'id4'],
      ['w1', '{"path":"b.txt"}', 'id5'],
    ])
    // Approve the parent's own write only, naming each call's session as the docs' example does.
    const { outcome } = await collect(
      agent.continue({
        approvals: pending.map((p) => ({
          toolCallId: p.toolCallId,
          approved: p.sessionId === undefined,
          sessionId: p.sessionId ?? agent.sessionId,
        })),
      }),
    )
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual(['c.txt'])
    const history = await agent.history()
    expectValidHistory(history)
    expect(pendingApprovals(history)).toEqual([])
  })

  test('errors on decisions that share an id name the session of each call they concern', async () => {
    const h = harness()
    const { agent, written } = pausedTwice(h, true)
    await collect(agent.run('Write a, b and c'))
    const refused = async (approvals: ApprovalDecision[]) => {
      const error = await agent.continue({ approvals }).done.catch((e: unknown) => e)
      return AgentError.is(error) ? [error.code, error.message] : error
    }
    const own = { toolCallId: 'w1', approved: true, sessionId: agent.sessionId }
    const a = { toolCallId: 'w1', approved: true, sessionId: 'id4' }
    // Which of the three w1 is left undecided: the host must be told which session's.
    expect(await refused([own, a])).toEqual([
      'approvals_missing',
      'no decision for the tool calls w1 (in session id5)',
    ])
    expect(await refused([a])).toEqual([
      'approvals_missing',
      `no decision for the tool calls w1 (in session ${agent.sessionId}), w1 (in session id5)`,
    ])
    // A session where w1 does not wait.
    expect(await refused([own, a, { toolCallId: 'w1', approved: true, sessionId: 'id9' }])).toEqual([
      'unknown_approval',
      'tool call w1 awaits no approval in session id9',
    ])
    expect(await refused([own, a, { toolCallId: 'w1', approved: false, sessionId: 'id4' }])).toEqual([
      'approval_already_decided',
      'tool call w1 in session id4 was already decided',
    ])
    expect(await refused([own, a, { toolCallId: 'w1', approved: true }])).toEqual([
      'invalid_options',
      `tool call w1 waits in more than one session (${agent.sessionId}, id4, id5): the decision needs its sessionId`,
    ])
    expect(written).toEqual([])
  })

  test("a parent's own call and two sub-agents' with one id: live and replay agree, session by session", async () => {
    const h = harness()
    const { agent, written } = pausedTwice(h, true)
    const first = await collect(agent.run('Write a, b and c'))
    const pending = first.outcome.pendingApprovals!
    expect(pending).toEqual([
      { toolCallId: 'w1', toolName: 'write_file', arguments: '{"path":"c.txt"}' },
      { toolCallId: 'w1', toolName: 'write_file', arguments: '{"path":"a.txt"}', sessionId: 'id4' },
      { toolCallId: 'w1', toolName: 'write_file', arguments: '{"path":"b.txt"}', sessionId: 'id5' },
    ])
    // Each decision reaches exactly its call: deny the parent's own, approve b only.
    const { outcome, events } = await collect(
      agent.continue({
        approvals: [
          { toolCallId: 'w1', approved: false, reason: 'not c', sessionId: agent.sessionId },
          { toolCallId: 'w1', approved: false, reason: 'not a', sessionId: 'id4' },
          { toolCallId: 'w1', approved: true, sessionId: 'id5' },
        ],
      }),
    )
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual(['b.txt'])
    const decisions = events.filter((event) => event.type === 'tool_approval_decision')
    expect(decisions.map((event) => [event.sessionId, event.toolCallId, event.approved])).toEqual([
      [agent.sessionId, 'w1', false],
      ...(decisions[1]?.sessionId === 'id4'
        ? [
            ['id4', 'w1', false],
            ['id5', 'w1', true],
          ]
        : [
            ['id5', 'w1', true],
            ['id4', 'w1', false],
          ]),
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history).filter((line) => /^(approval_decision|tool )/.test(line))).toEqual([
      'approval_decision w1 denied: not c',
      'approval_decision w1 in id4 denied: not a',
      'approval_decision w1 in id5 approved',
      'tool w1 error: denied by the user: not c',
      'tool p1 success: Writer: denied by the user: not a',
      'tool p2 success: Writer: wrote b.txt',
    ])
    const replay = await replaySession(h.store, agent.sessionId)
    const live = replayedPart([...first.events, ...events]) as Event[]
    for (const session of [agent.sessionId, 'id4', 'id5']) {
      const of = (list: Event[]) => summarize(list.filter((event) => event.sessionId === session))
      expect(of(replay)).toEqual(of(live))
    }
    // The parent's history alone (its sub-agents' sessions not loaded) shows each request and
    // decision with the session it belongs to, as live (where the sub-agents ran at once).
    const derived = replayedPart(deriveReplayEvents(history, { sessionId: agent.sessionId })) as Event[]
    const asked = (list: Event[]) =>
      list
        .filter((event) => event.type === 'tool_approval_request' || event.type === 'tool_approval_decision')
        .map((event) => JSON.stringify(event))
        .sort()
    expect(asked(derived)).toEqual(asked(live))
  })

  test("a sub-agent's own call and its sub-agent's with one id: each decision reaches its own, two levels down", async () => {
    const h = harness()
    const { tool: writeFile, written } = writeTool()
    const writer = defineSubAgent({
      name: 'writer',
      description: 'Writes files',
      system: 'You write.',
      tools: [writeFile],
    })
    // The manager writes m.txt itself and has the writer write a.txt; both models call it w1.
    const manager = defineSubAgent({
      name: 'manager',
      description: 'Manages writers',
      system: 'You manage.',
      tools: [writer, writeFile],
    })
    h.server.handle((request: RecordedRequest): ScriptedResponse => {
      const messages = (request.body as { messages: Messages }).messages
      const last = messages.at(-1)!
      const system = messages[0]?.content
      if (last.role === 'tool') return textReply(`r-${String(system)}`, `After: ${String(last.content)}`)
      if (system === 'You write.')
        return chatStream({ id: 'rw1', steps: [call('w1', 'write_file', { path: 'a.txt' })] })
      if (system === 'You manage.')
        return chatStream({
          id: 'rm1',
          steps: [
            call('m1', 'writer', { prompt: 'Write a.txt' }),
            call('w1', 'write_file', { path: 'm.txt' }),
          ],
        })
      return chatStream({ id: 'rp1', steps: [call('p1', 'manager', { prompt: 'Get files written' })] })
    })
    const agent = h.createAgent({ tools: [manager] })
    const first = await collect(agent.run('Write files'))
    const pending = first.outcome.pendingApprovals!
    expect(pending.map((p) => [p.toolCallId, p.arguments])).toEqual([
      ['w1', '{"path":"m.txt"}'],
      ['w1', '{"path":"a.txt"}'],
    ])
    const [managerId, writerId] = pending.map((p) => p.sessionId)
    expect(managerId).toBeDefined()
    expect(writerId).toBeDefined()
    expect(writerId).not.toBe(managerId)
    const error = await agent
      .continue({ approvals: [{ toolCallId: 'w1', approved: true }] })
      .done.catch((e: unknown) => e)
    expect(AgentError.is(error) && [error.code, error.message]).toEqual([
      'invalid_options',
      `tool call w1 waits in more than one session (${managerId}, ${writerId}): the decision needs its sessionId`,
    ])
    const { outcome, events } = await collect(
      agent.continue({
        approvals: [
          { toolCallId: 'w1', approved: true, sessionId: managerId },
          { toolCallId: 'w1', approved: false, reason: 'not a', sessionId: writerId },
        ],
      }),
    )
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual(['m.txt'])
    for (const id of [agent.sessionId, managerId!, writerId!]) {
      const history = await h.store.read(id)
      expectValidHistory(history)
      expect(pendingApprovals(history)).toEqual([])
    }
    expect(
      summarizeHistory(await h.store.read(managerId!)).filter((line) => line.startsWith('tool ')),
    ).toEqual(['tool w1 success: wrote m.txt', 'tool m1 success: After: denied by the user: not a'])
    const replay = await replaySession(h.store, agent.sessionId)
    const live = replayedPart([...first.events, ...events]) as Event[]
    for (const session of [agent.sessionId, managerId, writerId]) {
      const of = (list: Event[]) => summarize(list.filter((event) => event.sessionId === session))
      expect(of(replay)).toEqual(of(live))
    }
  })

  test('a new message answers every call that shares the id', async () => {
    const h = harness()
    const { agent, written } = pausedTwice(h, false)
    await collect(agent.run('Write a and b'))
    h.server.handle(() => textReply('rp3', 'Fine.'))
    const { outcome } = await collect(agent.run('Never mind'))
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual([])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history).filter((line) => line.startsWith('tool '))).toEqual([
      "tool p1 error: The sub-agent's tool calls were waiting for the user's approval; the user sent a new message instead.",
      "tool p2 error: The sub-agent's tool calls were waiting for the user's approval; the user sent a new message instead.",
    ])
  })

  test("a new message denies a parent's own call and its sub-agents' that share its id, each in its session", async () => {
    const h = harness()
    const { agent, written } = pausedTwice(h, true)
    const first = await collect(agent.run('Write a, b and c'))
    h.server.handle(() => textReply('rp3', 'Fine.'))
    const { outcome, events } = await collect(agent.run('Never mind'))
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual([])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history).filter((line) => line.startsWith('approval_decision'))).toEqual([
      'approval_decision w1 denied: the user sent a new message instead',
      'approval_decision w1 in id4 denied: the user sent a new message instead',
      'approval_decision w1 in id5 denied: the user sent a new message instead',
    ])
    for (const id of [agent.sessionId, 'id4', 'id5'])
      expect(pendingApprovals(await h.store.read(id))).toEqual([])
    const replay = await replaySession(h.store, agent.sessionId)
    const live = replayedPart([...first.events, ...events]) as Event[]
    for (const session of [agent.sessionId, 'id4', 'id5']) {
      const of = (list: Event[]) => summarize(list.filter((event) => event.sessionId === session))
      expect(of(replay)).toEqual(of(live))
    }
  })
})

describe('decisions and a store that fails as they are recorded', () => {
  const harness = useHarness('memory')

  test('the decisions of one continue are one append: a failure keeps all of them pending, none decided', async () => {
    const h = harness()
    const { tool: writeFile, written } = writeTool()
    h.server.enqueue(
      chatStream({
        id: 'r1',
        steps: [call('c1', 'write_file', { path: 'a.txt' }), call('c2', 'write_file', { path: 'b.txt' })],
      }),
    )
    const agent = h.createAgent({ tools: [writeFile] })
    await collect(agent.run('Write a and b'))
    // The process dies as it records c2's decision: its store takes nothing more.
    const dying = withAppends(h.store, (records, next) =>
      records.some((r) => !('role' in r) && r.type === 'approval_decision' && r.toolCallId === 'c2')
        ? Promise.reject(new Error('process died'))
        : next(records),
    )
    const doomed = h.createAgent({ store: dying, sessionId: agent.sessionId, tools: [writeFile] })
    const error = await doomed
      .continue({
        approvals: [
          { toolCallId: 'c1', approved: true },
          { toolCallId: 'c2', approved: true },
        ],
      })
      .done.catch((e: unknown) => e)
    expect((error as Error).message).toContain('process died')
    expect(written).toEqual([])
    // What the user decided is asked again, whole: no decision was half kept.
    const history = await h.store.read(agent.sessionId)
    expect(pendingApprovals(history).map((p) => p.toolCallId)).toEqual(['c1', 'c2'])
    h.server.enqueue(textReply('r2', 'Both written.'))
    const later = h.createAgent({ sessionId: agent.sessionId, tools: [writeFile] })
    const { outcome } = await collect(
      later.continue({
        approvals: [
          { toolCallId: 'c1', approved: true },
          { toolCallId: 'c2', approved: true },
        ],
      }),
    )
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual(['a.txt', 'b.txt'])
    expectValidHistory(await later.history())
  })
})

describe('decisions the host changes after continue', () => {
  const harness = useHarness('memory')

  test('are taken as they were when continue was called', async () => {
    const h = harness()
    const { tool: writeFile, written } = writeTool()
    h.server.enqueue(
      chatStream({
        id: 'r1',
        steps: [call('c1', 'write_file', { path: 'a.txt' }), call('c2', 'write_file', { path: 'b.txt' })],
      }),
    )
    h.server.enqueue(textReply('r2', 'Done.'))
    const agent = h.createAgent({ tools: [writeFile] })
    await collect(agent.run('Write a and b'))
    // A UI that sends its decisions, then clears its list and resets its choices for the next ask.
    const approvals = [
      { toolCallId: 'c1', approved: true },
      { toolCallId: 'c2', approved: false },
    ]
    const run = agent.continue({ approvals })
    approvals[0]!.approved = false
    approvals.length = 0
    const { outcome } = await collect(run)
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual(['a.txt'])
  })
})

describe('a needsApproval function that answers neither true nor false', () => {
  const harness = useHarness('memory')

  test.each([undefined, 0, 'no', null])(
    'answering %j asks: only false lets a call through',
    async (answer) => {
      const h = harness()
      // As an untyped caller's function may.
      const { tool: writeFile, written } = writeTool((() => answer) as unknown as () => boolean)
      h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a.txt' })] }))
      const agent = h.createAgent({ tools: [writeFile] })
      const { outcome } = await collect(agent.run('Write a'))
      expect(outcome.reason).toBe('awaiting_approval')
      expect(outcome.pendingApprovals?.map((p) => p.toolCallId)).toEqual(['c1'])
      expect(written).toEqual([])
    },
  )
})

describe('a decision that cannot be read', () => {
  const harness = useHarness('memory')

  test.each([
    [
      'a getter that throws',
      () => [
        {
          get toolCallId(): string {
            throw new Error('revoked')
          },
          approved: true,
        },
      ],
    ],
    [
      'a list whose items cannot be read',
      () =>
        new Proxy([{ toolCallId: 'c1', approved: true }], {
          get: (target, key, receiver) => {
            if (key === '0') throw new Error('revoked')
            return Reflect.get(target, key, receiver)
          },
        }),
    ],
  ])(
    '(%s) rejects done with invalid_options, as a decision of the wrong shape does; nothing runs',
    async (_, approvals) => {
      const h = harness()
      h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a.txt' })] }))
      const { tool, written } = writeTool()
      const agent = h.createAgent({ tools: [tool] })
      expect((await agent.run('Write a').done).reason).toBe('awaiting_approval')
      const before = await agent.history()
      // Not thrown by `continue` itself: a host that handles `done` handles this too.
      const run = agent.continue({ approvals: approvals() as ApprovalDecision[] })
      const error = await run.done.catch((e: unknown) => e)
      expect(AgentError.is(error) && error.code).toBe('invalid_options')
      expect((error as Error).message).toBe('a decision could not be read: revoked')
      expect(((error as Error).cause as Error).message).toBe('revoked')
      expect(written).toEqual([])
      expect(await agent.history()).toEqual(before)
      // The call still waits, and a readable decision runs it.
      h.server.enqueue(textReply('r2', 'Done.'))
      expect((await agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }] }).done).reason).toBe(
        'completed',
      )
      expect(written).toEqual(['a.txt'])
    },
  )
})

describe('a continue interrupted before its calls start', () => {
  const harness = useHarness('file')

  test('a denied call keeps the denial the user gave: the model reads it, not an interrupt', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({
        id: 'r1',
        steps: [call('c1', 'write_file', { path: 'a.txt' }), call('c2', 'write_file', { path: 'b.txt' })],
      }),
    )
    const { tool, written } = writeTool()
    const agent = h.createAgent({ tools: [tool] })
    expect((await agent.run('Write a and b').done).reason).toBe('awaiting_approval')
    const controller = new AbortController()
    controller.abort()
    const approvals = [
      { toolCallId: 'c1', approved: true },
      { toolCallId: 'c2', approved: false, reason: 'never b' },
    ]
    const { events, outcome } = await collect(agent.continue({ approvals }, { signal: controller.signal }))
    expect(outcome.reason).toBe('aborted')
    expect(written).toEqual([])
    expect(summarize(events.filter((event) => event.type === 'tool_result'))).toEqual([
      'tool_result c1 error: The user interrupted the task before this tool call ran.',
      'tool_result c2 error (last): denied by the user: never b',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history).filter((line) => line.startsWith('tool '))).toEqual([
      'tool c1 aborted: The user interrupted the task before this tool call ran.',
      'tool c2 error: denied by the user: never b',
    ])
  })

  test('a call a dead process left still says it may have run', async () => {
    const h = harness()
    await h.store.create({ id: 'dead' })
    await h.store.append('dead', [
      { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Write a' }] },
      {
        role: 'assistant',
        id: 'a1',
        createdAt: 2,
        parts: [{ type: 'tool_call', id: 'c9', name: 'write_file', argumentsJson: '{"path":"a.txt"}' }],
        stopReason: 'tool_use',
        responseId: 'r0',
      },
    ])
    const { tool, written } = writeTool(false)
    const agent = h.createAgent({ sessionId: 'dead', tools: [tool] })
    const controller = new AbortController()
    controller.abort()
    const { events, outcome } = await collect(agent.continue({}, { signal: controller.signal }))
    expect(outcome.reason).toBe('aborted')
    expect(written).toEqual([])
    // Its write may well have happened: an interrupt now must not tell the model it never ran.
    expect(summarize(events.filter((event) => event.type === 'tool_result'))).toEqual([
      'tool_result c9 error (last): The task stopped before this tool call finished (its process ended); it may or may not have run.',
    ])
    expectValidHistory(await agent.history())
  })
})
