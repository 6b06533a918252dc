import type { HistoryEvent } from '@kode/protocol'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { DurableTaskError } from '../src/errors.js'
import { type DurableTask, finishedOutcome, planTask } from '../src/task-plan.js'

// How an execution of a task's workflow decides what to do from the history: `base` is the
// session's record count when the task first ran, `u1` the id its input is persisted under.

const metadata = {
  main: { turnCount: 1, toolCallCount: 0, usage: {}, costUsd: 0, durationMs: 1 },
  subAgents: [],
} as never
const earlier: HistoryEvent[] = [
  { role: 'user', id: 'u0', createdAt: 1, parts: [{ type: 'text', text: 'Before' }] },
  { role: 'assistant', id: 'a0', createdAt: 1, parts: [{ type: 'text', text: 'Earlier answer' }] },
  { type: 'task_metadata', id: 'm0', createdAt: 1, metadata },
]
const input: HistoryEvent = { role: 'user', id: 'u1', createdAt: 2, parts: [{ type: 'text', text: 'Go' }] }
const calling: HistoryEvent = {
  role: 'assistant',
  id: 'a1',
  createdAt: 3,
  parts: [{ type: 'tool_call', id: 'c1', name: 'write', argumentsJson: '{}' }],
  stopReason: 'tool_use',
}
const run = { kind: 'run', sessionId: 's', input: 'Go' } as const

describe('planTask', () => {
  test('a task whose input is not in the history yet runs from its input', () => {
    expect(planTask(run, earlier, 3, 'u1')).toEqual({ kind: 'run', input: 'Go', messageId: 'u1' })
    // A system prompt written before the worker died is not the input.
    const system: HistoryEvent = {
      role: 'system',
      id: 's1',
      createdAt: 2,
      parts: [{ type: 'text', text: 'Be brief' }],
    }
    expect(planTask(run, [...earlier, system], 3, 'u1')).toEqual({
      kind: 'run',
      input: 'Go',
      messageId: 'u1',
    })
  })

  test('a task whose input is in the history carries on, naming its input for its end', () => {
    expect(planTask(run, [...earlier, input, calling], 3, 'u1')).toEqual({
      kind: 'continue',
      approvals: undefined,
      inputId: 'u1',
    })
  })

  test('a task that finished before its workflow recorded it is reported from its records', () => {
    const done: HistoryEvent[] = [
      ...earlier,
      input,
      {
        role: 'assistant',
        id: 'a2',
        createdAt: 4,
        parts: [{ type: 'text', text: 'Done.' }],
        stopReason: 'stop',
      },
      { type: 'task_metadata', id: 'm1', createdAt: 5, metadata, inputId: 'u1' },
    ]
    expect(planTask(run, done, 3, 'u1')).toEqual({
      kind: 'finished',
      outcome: { sessionId: 's', reason: 'completed', text: 'Done.', metadata },
    })
  })

  test("another task's records after base do not stand for this task's: it has not begun", () => {
    // This task's worker died before its input was written; another task then ran to its end.
    const other: HistoryEvent[] = [
      { role: 'user', id: 'u2', createdAt: 2, parts: [{ type: 'text', text: 'Something else' }] },
      { role: 'assistant', id: 'a2', createdAt: 3, parts: [{ type: 'text', text: 'Other answer' }] },
      { type: 'task_metadata', id: 'm2', createdAt: 4, metadata },
    ]
    expect(planTask(run, [...earlier, ...other], 3, 'u1')).toEqual({
      kind: 'run',
      input: 'Go',
      messageId: 'u1',
    })
  })

  test('a finished task is reported from its own records, not from a task that ran after it', () => {
    const history: HistoryEvent[] = [
      ...earlier,
      input,
      {
        role: 'assistant',
        id: 'a1',
        createdAt: 3,
        parts: [{ type: 'text', text: 'Mine.' }],
        stopReason: 'stop',
      },
      { type: 'task_metadata', id: 'm1', createdAt: 4, metadata, inputId: 'u1' },
      { role: 'user', id: 'u2', createdAt: 5, parts: [{ type: 'text', text: 'Next' }] },
      {
        role: 'assistant',
        id: 'a2',
        createdAt: 6,
        parts: [{ type: 'text', text: 'Theirs.' }],
        stopReason: 'stop',
      },
      { type: 'task_metadata', id: 'm2', createdAt: 7, metadata },
    ]
    expect(planTask(run, history, 3, 'u1')).toEqual({
      kind: 'finished',
      outcome: { sessionId: 's', reason: 'completed', text: 'Mine.', metadata },
    })
  })

  test("a task's end names its input: a later task's end after it is not taken for it", () => {
    // This task's worker died mid-task; another task's input came next, settled its calls and ended.
    const superseded: HistoryEvent[] = [
      ...earlier,
      input,
      calling,
      { role: 'user', id: 'u2', createdAt: 4, parts: [{ type: 'text', text: 'Something else' }] },
      {
        role: 'assistant',
        id: 'a2',
        createdAt: 5,
        parts: [{ type: 'text', text: 'Theirs.' }],
        stopReason: 'stop',
      },
      { type: 'task_metadata', id: 'm2', createdAt: 6, metadata, inputId: 'u2' },
    ]
    let thrown: unknown
    try {
      planTask(run, superseded, 3, 'u1')
    } catch (error) {
      thrown = error
    }
    expect(DurableTaskError.is(thrown) && [thrown.code, thrown.message]).toEqual([
      'task_superseded',
      'the task of input u1 stopped with its worker, and the task of input u2 began on its session before it was carried on',
    ])
    // Its own end, named, is found past nothing else.
    const ended: HistoryEvent[] = [
      ...earlier,
      input,
      {
        role: 'assistant',
        id: 'a1',
        createdAt: 3,
        parts: [{ type: 'text', text: 'Mine.' }],
        stopReason: 'stop',
      },
      { type: 'task_metadata', id: 'm1', createdAt: 4, metadata, inputId: 'u1' },
    ]
    expect(planTask(run, ended, 3, 'u1')).toEqual({
      kind: 'finished',
      outcome: { sessionId: 's', reason: 'completed', text: 'Mine.', metadata },
    })
  })

  test("another durable task that overtook it and died before its end is never carried on under this task's name", () => {
    // This task's worker died mid-call; another durable task's input came next (settling the call),
    // and its worker died in its turn. Whichever workflow a reaper resumes first must not carry the
    // other's input on: this one is superseded, the other is carried on naming its own input.
    const mine: HistoryEvent = { ...input, id: 'wf1:input' }
    const theirs: HistoryEvent = {
      role: 'user',
      id: 'wf2:input',
      createdAt: 4,
      parts: [{ type: 'text', text: 'Something else' }],
    }
    const settled: HistoryEvent = {
      role: 'tool',
      id: 't1',
      createdAt: 4,
      toolCallId: 'c1',
      toolName: 'write',
      status: 'error',
      outputText: 'stopped',
    } as never
    const history = [...earlier, mine, calling, settled, theirs, { ...calling, id: 'a2', createdAt: 5 }]
    let thrown: unknown
    try {
      planTask(run, history, 3, 'wf1:input')
    } catch (error) {
      thrown = error
    }
    expect(DurableTaskError.is(thrown) && [thrown.code, thrown.message]).toEqual([
      'task_superseded',
      'the task of input wf1:input stopped with its worker, and the task of input wf2:input began on its session before it was carried on',
    ])
    expect(planTask(run, history, 3, 'wf2:input')).toEqual({
      kind: 'continue',
      approvals: undefined,
      inputId: 'wf2:input',
    })
    // A continuation overtaken the same way is superseded too.
    let overtaken: unknown
    try {
      planTask({ kind: 'continue', sessionId: 's' }, history, 3, 'wf3:input')
    } catch (error) {
      overtaken = error
    }
    expect(DurableTaskError.is(overtaken) && overtaken.code).toBe('task_superseded')
    // A steering message (an id of no durable task's input) does not end the task.
    const steered = [...earlier, mine, calling, settled, { ...theirs, id: 'steer-1' }]
    expect(planTask(run, steered, 3, 'wf1:input')).toEqual({
      kind: 'continue',
      approvals: undefined,
      inputId: 'wf1:input',
    })
  })

  test("a plain run's end, which names no input, is not taken for the end of a task it overtook", () => {
    // This task's worker died mid-task; a plain `agent.run` (no `messageId`) came next and ended.
    const overtaken: HistoryEvent[] = [
      ...earlier,
      input,
      calling,
      { role: 'user', id: 'u2', createdAt: 4, parts: [{ type: 'text', text: 'Something else' }] },
      {
        role: 'assistant',
        id: 'a2',
        createdAt: 5,
        parts: [{ type: 'text', text: 'Theirs.' }],
        stopReason: 'stop',
      },
      { type: 'task_metadata', id: 'm2', createdAt: 6, metadata },
    ]
    let thrown: unknown
    try {
      planTask(run, overtaken, 3, 'u1')
    } catch (error) {
      thrown = error
    }
    expect(DurableTaskError.is(thrown) && [thrown.code, thrown.message]).toEqual([
      'task_superseded',
      'the task of input u1 stopped with its worker, and the task of input u2 began on its session before it was carried on',
    ])
  })

  /** The task's call answered by its continuation, a steering message, then `tail`. */
  const carriedOn = (...tail: HistoryEvent[]): HistoryEvent[] => [
    ...earlier,
    input,
    calling,
    {
      role: 'tool',
      id: 't1',
      createdAt: 4,
      toolCallId: 'c1',
      toolName: 'write',
      status: 'success',
      outputText: 'ok',
      parts: [],
    },
    { role: 'user', id: 'st1', createdAt: 5, parts: [{ type: 'text', text: 'Also check the total' }] },
    ...tail,
  ]
  const answer: HistoryEvent = {
    role: 'assistant',
    id: 'a2',
    createdAt: 6,
    parts: [{ type: 'text', text: 'Mine, carried on.' }],
    stopReason: 'stop',
  }

  test("a carried-on task's end names its input: it is found after a steering message too", () => {
    // The continuation (`agent.continue({ inputId })`) ended before its workflow did.
    const ended = carriedOn(answer, {
      type: 'task_metadata',
      id: 'm2',
      createdAt: 7,
      metadata,
      inputId: 'u1',
    })
    expect(planTask(run, ended, 3, 'u1')).toMatchObject({
      kind: 'finished',
      outcome: { reason: 'completed', text: 'Mine, carried on.' },
    })
  })

  test("an end naming no input is never this task's, even with no other user message before it", () => {
    // A plain `agent.continue()` (not this workflow's, which names the input) carried it on.
    const history = [
      ...earlier,
      input,
      calling,
      answer,
      { type: 'task_metadata', id: 'm2', createdAt: 7, metadata },
    ]
    let thrown: unknown
    try {
      planTask(run, history as HistoryEvent[], 3, 'u1')
    } catch (error) {
      thrown = error
    }
    expect(DurableTaskError.is(thrown) && [thrown.code, thrown.message]).toEqual([
      'task_superseded',
      'the task of input u1 stopped with its worker, and a task that named no input (a plain agent.continue) carried it on instead',
    ])
  })

  test("a continuation's end is the first after base, and one naming an input is another task's", () => {
    const carry: DurableTask = { kind: 'continue', sessionId: 's' }
    const mine: HistoryEvent[] = [
      {
        role: 'assistant',
        id: 'a5',
        createdAt: 5,
        parts: [{ type: 'text', text: 'Mine.' }],
        stopReason: 'stop',
      },
      { type: 'task_metadata', id: 'm5', createdAt: 6, metadata },
    ]
    const later: HistoryEvent[] = [
      { role: 'user', id: 'u9', createdAt: 7, parts: [{ type: 'text', text: 'Next' }] },
      {
        role: 'assistant',
        id: 'a9',
        createdAt: 8,
        parts: [{ type: 'text', text: 'Later.' }],
        stopReason: 'stop',
      },
      { type: 'task_metadata', id: 'm9', createdAt: 9, metadata, inputId: 'u9' },
    ]
    expect(planTask(carry, [...earlier, ...mine, ...later], 3, 'x')).toMatchObject({
      kind: 'finished',
      outcome: { text: 'Mine.' },
    })
    let thrown: unknown
    try {
      planTask(carry, [...earlier, ...later], 3, 'x')
    } catch (error) {
      thrown = error
    }
    expect(DurableTaskError.is(thrown) && [thrown.code, thrown.message]).toEqual([
      'task_superseded',
      'the continued task stopped with its worker, and the task of input u9 began on its session before it was carried on',
    ])
  })

  test('decisions an earlier execution recorded are not given twice', () => {
    const task: DurableTask = {
      kind: 'continue',
      sessionId: 's',
      approvals: [
        { toolCallId: 'c1', approved: true },
        { toolCallId: 'c2', approved: false },
      ],
    }
    const decided: HistoryEvent = {
      type: 'approval_decision',
      id: 'd1',
      createdAt: 6,
      toolCallId: 'c1',
      toolName: 'write',
      approved: true,
    }
    expect(planTask(task, [...earlier, input, calling], 6, 'u1')).toEqual({
      kind: 'continue',
      approvals: task.approvals,
    })
    expect(planTask(task, [...earlier, input, calling, decided], 5, 'u1')).toEqual({
      kind: 'continue',
      approvals: [{ toolCallId: 'c2', approved: false }],
    })
  })
})

describe('planTask, with sub-agent calls that share an id', () => {
  // The task's calls p1 and p2 each ran a sub-agent, and both sub-agents paused at their call w1.
  const parentCalls: HistoryEvent = {
    role: 'assistant',
    id: 'a1',
    createdAt: 3,
    parts: [
      { type: 'tool_call', id: 'p1', name: 'writer', argumentsJson: '{}' },
      { type: 'tool_call', id: 'p2', name: 'writer', argumentsJson: '{}' },
    ],
    stopReason: 'tool_use',
  }
  const asked = (sessionId: string, via: string): HistoryEvent => ({
    type: 'approval_request',
    id: `q-${sessionId}`,
    createdAt: 4,
    toolCallId: 'w1',
    toolName: 'write',
    arguments: '{}',
    sessionId,
    subAgentCall: { toolCallId: via, sessionId },
  })
  const paused = [...earlier, input, parentCalls, asked('k1', 'p1'), asked('k2', 'p2')]
  const decidedK1: HistoryEvent = {
    type: 'approval_decision',
    id: 'd1',
    createdAt: 6,
    toolCallId: 'w1',
    toolName: 'write',
    approved: true,
    sessionId: 'k1',
  }

  test("a decision recorded for one session is not given again; the other session's is", () => {
    const task: DurableTask = {
      kind: 'continue',
      sessionId: 's',
      approvals: [
        { toolCallId: 'w1', approved: true, sessionId: 'k1' },
        { toolCallId: 'w1', approved: false, sessionId: 'k2' },
      ],
    }
    expect(planTask(task, [...paused, decidedK1], 5, 'u1')).toEqual({
      kind: 'continue',
      approvals: [{ toolCallId: 'w1', approved: false, sessionId: 'k2' }],
    })
  })

  test('a worker that died as the task paused reports each waiting call with its session', () => {
    const task: DurableTask = { kind: 'continue', sessionId: 's' }
    const plan = planTask(task, paused, 3, 'u1')
    expect(plan.kind === 'finished' && plan.outcome.pendingApprovals).toEqual([
      { toolCallId: 'w1', toolName: 'write', arguments: '{}', sessionId: 'k1' },
      { toolCallId: 'w1', toolName: 'write', arguments: '{}', sessionId: 'k2' },
    ])
  })

  test('a task that paused before its workflow recorded it reports each waiting call with its session', () => {
    const end: HistoryEvent = {
      type: 'task_metadata',
      id: 'm1',
      createdAt: 5,
      metadata,
      reason: 'awaiting_approval',
      inputId: 'u1',
    }
    const plan = planTask(run, [...paused, end], 3, 'u1')
    expect(plan.kind === 'finished' && plan.outcome.pendingApprovals).toEqual([
      { toolCallId: 'w1', toolName: 'write', arguments: '{}', sessionId: 'k1' },
      { toolCallId: 'w1', toolName: 'write', arguments: '{}', sessionId: 'k2' },
    ])
  })
})

describe('finishedOutcome', () => {
  test('an error record, an interrupt and a pending approval each say how the task ended', () => {
    const end = { type: 'task_metadata', id: 'm', createdAt: 9, metadata } as const
    expect(
      finishedOutcome('s', [
        input,
        { type: 'error', id: 'e', createdAt: 4, message: 'boom', canRetry: false },
        end,
      ]),
    ).toEqual({
      sessionId: 's',
      reason: 'error',
      text: '',
      errorMessage: 'boom',
      metadata,
    })
    expect(finishedOutcome('s', [input, { type: 'interrupt', id: 'i', createdAt: 4 }, end]).reason).toBe(
      'aborted',
    )
    const request: HistoryEvent = {
      type: 'approval_request',
      id: 'q',
      createdAt: 4,
      toolCallId: 'c1',
      toolName: 'write',
      arguments: '{}',
    }
    expect(finishedOutcome('s', [input, calling, request, end])).toMatchObject({
      reason: 'awaiting_approval',
      pendingApprovals: [{ toolCallId: 'c1', toolName: 'write', arguments: '{}' }],
    })
  })

  test('the reason its end records is the reason of the outcome, with what stopped it', () => {
    const stopped: HistoryEvent = {
      type: 'error',
      id: 'e',
      createdAt: 4,
      message: 'stopped after 1 turn',
      canRetry: false,
    }
    for (const reason of ['max_turns', 'structured_output_invalid', 'error'] as const) {
      const end = { type: 'task_metadata', id: 'm', createdAt: 9, metadata, reason } as const
      expect(finishedOutcome('s', [input, stopped, end])).toEqual({
        sessionId: 's',
        reason,
        text: '',
        errorMessage: 'stopped after 1 turn',
        metadata,
      })
    }
    const answer: HistoryEvent = {
      role: 'assistant',
      id: 'a',
      createdAt: 5,
      parts: [{ type: 'text', text: 'Done.' }],
    }
    const end = { type: 'task_metadata', id: 'm', createdAt: 9, metadata, reason: 'completed' } as const
    expect(finishedOutcome('s', [input, answer, end])).toEqual({
      sessionId: 's',
      reason: 'completed',
      text: 'Done.',
      metadata,
    })
  })

  test("a structured task's answer is read back as its output only when it completed and is valid", () => {
    const Invoice = Type.Object({ paid: Type.Boolean(), email: Type.String({ format: 'email' }) })
    const answer = (id: string, ...texts: string[]): HistoryEvent => ({
      role: 'assistant',
      id,
      createdAt: 5,
      parts: texts.map((text) => ({ type: 'text', text })),
    })
    const ended = (reason: 'completed' | 'aborted') =>
      ({ type: 'task_metadata', id: 'm', createdAt: 9, metadata, reason }) as const
    const value = { paid: true, email: 'a@example.com' }
    const json = JSON.stringify(value)
    // As the engine reads it: the text, a fenced block in it, the last text part. A format no
    // checker is registered for is not asserted, as by the engine.
    for (const texts of [[json], [`Here:\n\`\`\`json\n${json}\n\`\`\``], ['Here it is.', json]]) {
      expect(
        finishedOutcome('s', [input, answer('a', ...texts), ended('completed')], Invoice).output,
      ).toEqual(value)
    }
    // Never a value the schema refuses, nor one of a task that did not complete.
    expect(
      finishedOutcome('s', [input, answer('a', '{"paid":"yes"}'), ended('completed')], Invoice),
    ).not.toHaveProperty('output')
    expect(finishedOutcome('s', [input, answer('a', json), ended('aborted')], Invoice)).not.toHaveProperty(
      'output',
    )
    expect(finishedOutcome('s', [input, answer('a', json), ended('completed')])).not.toHaveProperty('output')
  })

  test('a compaction whose summary failed does not make the task a failure', () => {
    const end = { type: 'task_metadata', id: 'm', createdAt: 9, metadata } as const
    const failedSummary: HistoryEvent = {
      type: 'error',
      id: 'e',
      createdAt: 4,
      message: 'The summary failed: down',
      canRetry: false,
      compaction: { reason: 'threshold', tokensBefore: 3000 },
    }
    const answer: HistoryEvent = {
      role: 'assistant',
      id: 'a',
      createdAt: 5,
      parts: [{ type: 'text', text: 'Done.' }],
      stopReason: 'stop',
    }
    expect(finishedOutcome('s', [input, failedSummary, answer, end])).toEqual({
      sessionId: 's',
      reason: 'completed',
      text: 'Done.',
      metadata,
    })
  })

  describe('a task whose worker died as it paused for approval', () => {
    const asking: HistoryEvent = {
      type: 'approval_request',
      id: 'q1',
      createdAt: 4,
      toolCallId: 'c1',
      toolName: 'write',
      arguments: '{}',
    } as HistoryEvent
    const paused = {
      kind: 'finished',
      outcome: {
        sessionId: 's',
        reason: 'awaiting_approval',
        text: '',
        metadata: { main: { sessionId: 's', durationMs: 0, turnCount: 0 }, subAgents: [] },
        pendingApprovals: [{ toolCallId: 'c1', toolName: 'write', arguments: '{}' }],
      },
    }

    test('is reported paused, not carried on without the decisions it waits for', () => {
      expect(planTask(run, [...earlier, input, calling, asking], 3, 'u1')).toEqual(paused)
    })

    test('a continuation that paused again for a new call is reported paused; one given its decision carries on', () => {
      const cont: DurableTask = {
        kind: 'continue',
        sessionId: 's',
        approvals: [{ toolCallId: 'c0', approved: true }],
      }
      const decided: HistoryEvent = {
        type: 'approval_decision',
        id: 'd0',
        createdAt: 3,
        toolCallId: 'c0',
        approved: true,
      } as HistoryEvent
      expect(planTask(cont, [...earlier, decided, calling, asking], 3, 'x')).toEqual(paused)
      // The first execution of a continuation sees no record of its own: the agent checks its decisions.
      expect(
        planTask(
          { ...cont, approvals: [{ toolCallId: 'zz', approved: true }] },
          [...earlier, calling, asking],
          5,
          'x',
        ),
      ).toEqual({
        kind: 'continue',
        approvals: [{ toolCallId: 'zz', approved: true }],
      })
      const given = { ...cont, approvals: [{ toolCallId: 'c1', approved: true }] }
      expect(planTask(given, [...earlier, calling, asking], 3, 'x')).toEqual({
        kind: 'continue',
        approvals: [{ toolCallId: 'c1', approved: true }],
      })
    })
  })
})
