import { AgentError, defineTool, pendingApprovals } from '@kode/core'
import { checkEventOrder, type Event, type HistoryEvent } from '@kode/protocol'
import { deriveReplayEvents, exportHtml, forkSession } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say, textReply } from './helpers/chat-wire.js'
import { collect, type Harness, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { recordingAppends } from './helpers/recording-store.js'
import { replayedPart, replayOf, replayThenLive } from './helpers/replayed.js'
import { summarize, summarizeHistory, textResponse } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

/** A tool that always asks, counting its executions. */
function writeTool() {
  const written: string[] = []
  const tool = defineTool({
    name: 'write_file',
    description: 'Writes a file',
    parameters: Type.Object({ path: Type.String(), text: Type.String() }),
    needsApproval: true,
    execute: ({ path }) => {
      written.push(path)
      return `wrote ${path}`
    },
  })
  return { tool, written }
}

/** The model writes a.txt and reads b.txt in one response, then answers. */
function script(h: Harness, final = 'Done.') {
  h.server.enqueue(
    chatStream({
      id: 'r1',
      steps: [
        say('On it.'),
        call('c1', 'write_file', { path: 'a.txt', text: 'hi' }),
        call('c2', 'read_file', { path: 'b.txt' }),
      ],
    }),
  )
  h.server.enqueue(textReply('r2', final))
}

/** The history of the paused task of `script`. */
const PAUSED_HISTORY = [
  'user: Write a, read b',
  'assistant tool_use: text "On it." | call c1 write_file {"path":"a.txt","text":"hi"} | call c2 read_file {"path":"b.txt"}',
  'approval_request c1 write_file {"path":"a.txt","text":"hi"}',
  'tool c2 success: contents of b.txt',
  'task_metadata turns=1 subAgents=0',
]

/** The events of continuing the paused task of `script` with `decision` on c1, answered `final`. */
function continuedEvents(decision: string, result: string, final: string): string[] {
  return [
    'task_start',
    'turn_start',
    `tool_approval_decision c1 ${decision}`,
    'tool_call c1 write_file {"path":"a.txt","text":"hi"}',
    `tool_result c1 ${result.startsWith('wrote') ? 'success' : 'error'} (last): ${result}`,
    'turn_end',
    ...textResponse(final),
    'turn_end',
    'task_metadata turns=1 subAgents=0',
    `task_finish completed: ${final}`,
  ]
}

const AWAITING = [
  'task_start',
  'user_message: Write a, read b',
  ...textResponse('On it.').slice(0, -3),
  'tool_call_start c1 write_file',
  'tool_call_start c2 read_file',
  'response_complete: On it.',
  'usage 100/20',
  'context_usage 120/128000',
  'tool_approval_request c1 write_file {"path":"a.txt","text":"hi"}',
  'tool_call c2 read_file {"path":"b.txt"}',
  'tool_result c2 success (last): contents of b.txt',
  'turn_end',
  'task_metadata turns=1 subAgents=0',
  'task_finish awaiting_approval: On it.',
]

describe.each(['memory', 'file'] as const)('tool approval (%s store)', (kind) => {
  const harness = useHarness(kind)

  test('pauses at a call that needs approval, runs the others, and continues once approved', async () => {
    const h = harness()
    script(h)
    const { tool, written } = writeTool()
    const agent = h.createAgent({ tools: [tool, readFile] })
    const first = await collect(agent.run('Write a, read b'))
    expectOrdered(first.events)
    expect(summarize(first.events)).toEqual(AWAITING)
    expect(first.outcome).toMatchObject({
      reason: 'awaiting_approval',
      pendingApprovals: [
        { toolCallId: 'c1', toolName: 'write_file', arguments: '{"path":"a.txt","text":"hi"}' },
      ],
    })
    expect(written).toEqual([])

    const second = await collect(agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }] }))
    expectOrdered(second.events)
    expect(summarize(second.events)).toEqual([
      'task_start',
      'turn_start',
      'tool_approval_decision c1 approved',
      'tool_call c1 write_file {"path":"a.txt","text":"hi"}',
      'tool_result c1 success (last): wrote a.txt',
      'turn_end',
      ...textResponse('Done.'),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Done.',
    ])
    expect(second.outcome.reason).toBe('completed')
    expect(written).toEqual(['a.txt'])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Write a, read b',
      'assistant tool_use: text "On it." | call c1 write_file {"path":"a.txt","text":"hi"} | call c2 read_file {"path":"b.txt"}',
      'approval_request c1 write_file {"path":"a.txt","text":"hi"}',
      'tool c2 success: contents of b.txt',
      'task_metadata turns=1 subAgents=0',
      'approval_decision c1 approved',
      'tool c1 success: wrote a.txt',
      'assistant stop: text "Done."',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(history[2]).toEqual({
      type: 'approval_request',
      id: 'id3',
      createdAt: 1000,
      toolCallId: 'c1',
      toolName: 'write_file',
      arguments: '{"path":"a.txt","text":"hi"}',
      responseId: 'r1',
    })
    // The model sees both results, in the order they were persisted.
    const messages = (h.server.requests[1]!.body as { messages: { role: string; content: unknown }[] })
      .messages
    expect(messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'c2', content: 'contents of b.txt' },
      { role: 'tool', tool_call_id: 'c1', content: 'wrote a.txt' },
    ])
  })
})

describe('tool approval', () => {
  const harness = useHarness('file')

  async function paused(h: Harness, final?: string) {
    script(h, final)
    const write = writeTool()
    const agent = h.createAgent({ tools: [write.tool, readFile] })
    const { outcome, events } = await collect(agent.run('Write a, read b'))
    expect(outcome.reason).toBe('awaiting_approval')
    return { agent, events, ...write }
  }

  test('a denied call is never run: the model reads "denied by the user: <reason>"', async () => {
    const h = harness()
    const { agent, written } = await paused(h, 'Understood.')
    const { events } = await collect(
      agent.continue({ approvals: [{ toolCallId: 'c1', approved: false, reason: 'not that file' }] }),
    )
    expectOrdered(events)
    expect(summarize(events)).toEqual(
      continuedEvents('denied: not that file', 'denied by the user: not that file', 'Understood.'),
    )
    expect(written).toEqual([])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      ...PAUSED_HISTORY,
      'approval_decision c1 denied: not that file',
      'tool c1 error: denied by the user: not that file',
      'assistant stop: text "Understood."',
      'task_metadata turns=1 subAgents=0',
    ])
  })

  test('deciding twice, an unknown id or a missing decision is an AgentError and runs nothing', async () => {
    const h = harness()
    const { agent, written } = await paused(h)
    const refused = async (approvals: unknown) => {
      const run = agent.continue({ approvals: approvals as { toolCallId: string; approved: boolean }[] })
      const error = await run.done.then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(AgentError.is(error)).toBe(true)
      // The iterator fails with the same error before any event.
      const seen: Event[] = []
      await expect(
        (async () => {
          for await (const event of run) seen.push(event)
        })(),
      ).rejects.toBe(error)
      expect(seen).toEqual([])
      return (error as AgentError).code
    }
    expect(await refused([{ toolCallId: 'nope', approved: true }])).toBe('unknown_approval')
    expect(await refused([])).toBe('approvals_missing')
    expect(
      await refused([
        { toolCallId: 'c1', approved: true },
        { toolCallId: 'c1', approved: false },
      ]),
    ).toBe('approval_already_decided')
    expect(await refused([{ toolCallId: 'c2', approved: true }])).toBe('unknown_approval')
    // Decisions of the wrong shape: one decision not in a list, a reason the history cannot hold.
    expect(await refused({ toolCallId: 'c1', approved: true })).toBe('invalid_options')
    expect(await refused([{ toolCallId: 'c1', approved: false, reason: { why: 'no' } }])).toBe(
      'invalid_options',
    )
    const before = await agent.history()
    expect(summarizeHistory(before)).toEqual(PAUSED_HISTORY)

    await collect(agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }] }))
    expect(await refused([{ toolCallId: 'c1', approved: true }])).toBe('approval_already_decided')
    expect(written).toEqual(['a.txt'])
  })

  test('a new process on the same store finds the pending approval and runs it exactly once', async () => {
    const h = harness()
    const { agent, written } = await paused(h)
    // Another process: the first one is gone; a new store over the same directory, a new agent.
    await h.store.close()
    const store = h.reopenStore()
    const again = writeTool()
    const later = h.createAgent({ store, sessionId: agent.sessionId, tools: [again.tool, readFile] })
    expect(pendingApprovals(await later.history())).toEqual([
      { toolCallId: 'c1', toolName: 'write_file', arguments: '{"path":"a.txt","text":"hi"}' },
    ])
    const { events, outcome } = await collect(
      later.continue({ approvals: [{ toolCallId: 'c1', approved: true, reason: 'looks fine' }] }),
    )
    expectOrdered(events)
    expect(summarize(events)).toEqual(continuedEvents('approved: looks fine', 'wrote a.txt', 'Done.'))
    expect(outcome.reason).toBe('completed')
    expect(written).toEqual([])
    expect(again.written).toEqual(['a.txt'])
    const history = await later.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      ...PAUSED_HISTORY,
      'approval_decision c1 approved: looks fine',
      'tool c1 success: wrote a.txt',
      'assistant stop: text "Done."',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(pendingApprovals(history)).toEqual([])
  })

  test('a new user message denies the pending calls first', async () => {
    const h = harness()
    const { agent, written, events: first } = await paused(h, 'Fine, nothing written.')
    const { events } = await collect(agent.run('Never mind'))
    expectOrdered(events)
    // The denials come in a turn of their own, as `continue` answers decided calls.
    expect(summarize(events)).toEqual([
      'task_start',
      'turn_start',
      'tool_approval_decision c1 denied: the user sent a new message instead',
      'tool_call c1 write_file {"path":"a.txt","text":"hi"}',
      'tool_result c1 error (last): denied by the user: the user sent a new message instead',
      'turn_end',
      'user_message: Never mind',
      ...textResponse('Fine, nothing written.'),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Fine, nothing written.',
    ])
    expect(written).toEqual([])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      ...PAUSED_HISTORY,
      'approval_decision c1 denied: the user sent a new message instead',
      'tool c1 error: denied by the user: the user sent a new message instead',
      'user: Never mind',
      'assistant stop: text "Fine, nothing written."',
      'task_metadata turns=1 subAgents=0',
    ])
    // The two tasks' events are the replay of the history they leave.
    expect(replayedPart([...first, ...events])).toEqual(replayOf(history, agent.sessionId))
  })

  test('an interrupt while a call awaits approval answers it aborted, leaving nothing pending', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({
        id: 'r1',
        steps: [call('c1', 'write_file', { path: 'a.txt', text: 'hi' }), call('c2', 'slow', {})],
      }),
    )
    const { tool, written } = writeTool()
    const controller = new AbortController()
    const slow = defineTool({
      name: 'slow',
      description: 'Waits',
      parameters: Type.Object({}),
      execute: (_args, ctx) =>
        new Promise<string>((resolve) => {
          ctx.signal.addEventListener('abort', () => resolve('stopped'))
          controller.abort()
        }),
    })
    const agent = h.createAgent({ tools: [tool, slow] })
    const { events, outcome } = await collect(agent.run('Go', { signal: controller.signal }))
    expectOrdered(events)
    expect(outcome.reason).toBe('aborted')
    expect(outcome.pendingApprovals).toBeUndefined()
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Go',
      'turn_start',
      'tool_call_start c1 write_file',
      'tool_call_start c2 slow',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_approval_request c1 write_file {"path":"a.txt","text":"hi"}',
      'tool_call c2 slow {}',
      // In call order, the last of the turn marked last, as in the replay.
      'tool_call c1 write_file {"path":"a.txt","text":"hi"}',
      'tool_result c1 error: The user interrupted the task before this tool call ran.',
      'tool_result c2 error (last): The user interrupted this tool call before it finished.',
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish aborted: ',
    ])
    expect(written).toEqual([])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Go',
      'assistant tool_use: call c1 write_file {"path":"a.txt","text":"hi"} | call c2 slow {}',
      'approval_request c1 write_file {"path":"a.txt","text":"hi"}',
      'tool c1 aborted: The user interrupted the task before this tool call ran.',
      'tool c2 aborted: The user interrupted this tool call before it finished.',
      'task_metadata turns=1 subAgents=0',
    ])
    const results = (list: readonly Event[]) => summarize(list.filter((e) => e.type === 'tool_result'))
    expect(results(deriveReplayEvents(history, { sessionId: agent.sessionId }))).toEqual(results(events))
    const late = await agent
      .continue({ approvals: [{ toolCallId: 'c1', approved: true }] })
      .done.catch((e: unknown) => e)
    expect(AgentError.is(late) && late.code).toBe('approval_already_decided')
  })

  test('an interrupt while a needsApproval check ignores its signal ends the task at once', async () => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'risky', {}), call('c2', 'risky', {})] }))
    const controller = new AbortController()
    let checks = 0
    const risky = defineTool({
      name: 'risky',
      description: 'Asks, after a check that never ends',
      parameters: Type.Object({}),
      needsApproval: () => {
        checks++
        controller.abort()
        return new Promise<boolean>(() => {})
      },
      execute: () => 'ran',
    })
    const agent = h.createAgent({ tools: [risky] })
    const ended = collect(agent.run('Go', { signal: controller.signal }))
    const first = await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 2000, 'hung'))])
    expect(first).not.toBe('hung')
    const { events, outcome } = await ended
    expectOrdered(events)
    expect(outcome.reason).toBe('aborted')
    expect(outcome.pendingApprovals).toBeUndefined()
    expect(checks).toBe(1)
    expect(summarize(events).slice(8)).toEqual([
      // Neither started: announced together before their results, as the replay shows them.
      'tool_call c1 risky {}',
      'tool_call c2 risky {}',
      'tool_result c1 error: The user interrupted the task before this tool call ran.',
      'tool_result c2 error (last): The user interrupted the task before this tool call ran.',
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish aborted: ',
    ])
    expectValidHistory(await agent.history())
  })

  test('an interrupt during an approved call aborts it like any call', async () => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'deploy', {})] }))
    const controller = new AbortController()
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploys',
      parameters: Type.Object({}),
      needsApproval: true,
      execute: (_args, ctx) =>
        new Promise<string>((resolve) => {
          ctx.signal.addEventListener('abort', () => resolve('stopped'))
          controller.abort()
        }),
    })
    const agent = h.createAgent({ tools: [deploy] })
    await collect(agent.run('Deploy'))
    const { events, outcome } = await collect(
      agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }] }, { signal: controller.signal }),
    )
    expectOrdered(events)
    expect(outcome.reason).toBe('aborted')
    expect(summarize(events)).toEqual([
      'task_start',
      'turn_start',
      'tool_approval_decision c1 approved',
      'tool_call c1 deploy {}',
      'tool_result c1 error (last): The user interrupted this tool call before it finished.',
      'interrupt',
      'turn_end',
      'task_metadata turns=0 subAgents=0',
      'task_finish aborted: ',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Deploy',
      'assistant tool_use: call c1 deploy {}',
      'approval_request c1 deploy {}',
      'task_metadata turns=1 subAgents=0',
      'approval_decision c1 approved',
      'tool c1 aborted: The user interrupted this tool call before it finished.',
      'task_metadata turns=0 subAgents=0',
    ])
  })

  test('a fork at the pending approval can be decided apart from its source', async () => {
    const h = harness()
    // The fork carries on first: it gets the scripted answer, the source the next one.
    const { agent, written } = await paused(h, 'Denied on the fork.')
    h.server.enqueue(textReply('r3', 'Done.'))
    const fork = await forkSession(h.store, agent.sessionId)
    const forked = h.createAgent({ sessionId: fork.id, tools: [writeTool().tool, readFile] })
    const onFork = await collect(forked.continue({ approvals: [{ toolCallId: 'c1', approved: false }] }))
    expectOrdered(onFork.events)
    expect(summarize(onFork.events)).toEqual(
      continuedEvents('denied', 'denied by the user', 'Denied on the fork.'),
    )
    expect(onFork.outcome.reason).toBe('completed')
    // The source still waits for its own decision.
    const source = await collect(agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }] }))
    expect(source.outcome.reason).toBe('completed')
    expect(written).toEqual(['a.txt'])
    expect(summarizeHistory(await forked.history())).toEqual([
      ...PAUSED_HISTORY,
      'approval_decision c1 denied',
      'tool c1 error: denied by the user',
      'assistant stop: text "Denied on the fork."',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(summarizeHistory(await agent.history())).toEqual([
      ...PAUSED_HISTORY,
      'approval_decision c1 approved',
      'tool c1 success: wrote a.txt',
      'assistant stop: text "Done."',
      'task_metadata turns=1 subAgents=0',
    ])
  })

  test('replay and export show the requests and the decisions', async () => {
    const h = harness()
    const { agent } = await paused(h)
    await collect(agent.continue({ approvals: [{ toolCallId: 'c1', approved: true, reason: 'ok by me' }] }))
    const history = await agent.history()
    const replay = deriveReplayEvents(history, { sessionId: agent.sessionId })
    expect(checkEventOrder(replay)).toEqual([])
    expect(summarize(replay)).toEqual([
      'user_message: Write a, read b',
      'turn_start',
      'response_complete: On it.',
      'usage 100/20',
      'tool_approval_request c1 write_file {"path":"a.txt","text":"hi"}',
      'tool_call c2 read_file {"path":"b.txt"}',
      'tool_result c2 success (last): contents of b.txt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      // The approved call runs in the next task, after its decision, in a turn of its own as live.
      'turn_start',
      'tool_approval_decision c1 approved: ok by me',
      'tool_call c1 write_file {"path":"a.txt","text":"hi"}',
      'tool_result c1 success (last): wrote a.txt',
      'turn_end',
      'turn_start',
      'response_complete: Done.',
      'usage 100/20',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
    ])
    const html = exportHtml(history)
    expect(html).toContain('Approval requested for write_file')
    expect(html).toContain('Approved by the user: write_file (ok by me)')
  })

  test('a response and the approval requests of its calls are one append: a reader never sees one without the other', async () => {
    const h = harness()
    const { store, appends } = recordingAppends(h.store)
    script(h)
    const agent = h.createAgent({ store, tools: [writeTool().tool, readFile] })
    const { outcome } = await collect(agent.run('Write a, read b'))
    expect(outcome.reason).toBe('awaiting_approval')
    const asked = appends.find((records) => records.some((r) => 'role' in r && r.role === 'assistant'))
    expect(
      asked?.map((r) => ('role' in r ? r.role : `${r.type} ${'toolCallId' in r ? r.toolCallId : ''}`)),
    ).toEqual(['assistant', 'approval_request c1'])
    // So the replay of what a follower can have read at any moment never shows a waiting call as
    // one that runs (the replay of a cut history closes its turn, so compare the calls alone).
    const history = await agent.history()
    const calls = (records: readonly HistoryEvent[]) =>
      summarize(deriveReplayEvents(records, { sessionId: agent.sessionId })).filter((e) =>
        /^(tool_call|tool_approval_request) /.test(e),
      )
    const whole = calls(history)
    expect(whole).toEqual([
      'tool_approval_request c1 write_file {"path":"a.txt","text":"hi"}',
      'tool_call c2 read_file {"path":"b.txt"}',
    ])
    let read = 0
    for (const records of appends) {
      read += records.length
      const seen = calls(history.slice(0, read))
      expect(whole.slice(0, seen.length), `after ${read} records`).toEqual(seen)
    }
  })

  test('needsApproval as a function asks only for the arguments it names', async () => {
    const h = harness()
    const ran: string[] = []
    const bash = defineTool({
      name: 'bash',
      description: 'Runs a command',
      parameters: Type.Object({ command: Type.String() }),
      needsApproval: ({ command }, ctx) => ctx.toolName === 'bash' && command.startsWith('rm'),
      execute: ({ command }) => {
        ran.push(command)
        return 'ok'
      },
    })
    h.server.enqueue(
      chatStream({
        id: 'r1',
        steps: [call('c1', 'bash', { command: 'ls' }), call('c2', 'bash', { command: 'rm -rf x' })],
      }),
    )
    const agent = h.createAgent({ tools: [bash] })
    const { outcome } = await collect(agent.run('Clean up'))
    expect(outcome.pendingApprovals).toEqual([
      { toolCallId: 'c2', toolName: 'bash', arguments: '{"command":"rm -rf x"}' },
    ])
    expect(ran).toEqual(['ls'])
  })

  test('continue carries on a task whose process died, answering the calls it left', async () => {
    const h = harness()
    // What a process that died mid-task left: the input and a response whose call never finished.
    const dead: HistoryEvent[] = [
      { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Read b' }] },
      {
        role: 'assistant',
        id: 'a1',
        createdAt: 2,
        parts: [{ type: 'tool_call', id: 'c9', name: 'read_file', argumentsJson: '{"path":"b.txt"}' }],
        stopReason: 'tool_use',
        responseId: 'r0',
      },
    ]
    await h.store.create({ id: 'dead' })
    await h.store.append('dead', dead)
    h.server.enqueue(textReply('r1', 'It may not have been read.'))
    const agent = h.createAgent({ sessionId: 'dead', tools: [readFile] })
    const { events, outcome } = await collect(agent.continue())
    // The call and its turn were announced by the dead process (and are in the replay).
    expectOrdered(replayThenLive(dead, 'dead', events))
    expect(outcome.reason).toBe('completed')
    const stopped =
      'The task stopped before this tool call finished (its process ended); it may or may not have run.'
    expect(summarize(events)).toEqual([
      'task_start',
      `tool_result c9 error (last): ${stopped}`,
      'turn_end',
      ...textResponse('It may not have been read.'),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: It may not have been read.',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Read b',
      'assistant tool_use: call c9 read_file {"path":"b.txt"}',
      `tool c9 error: ${stopped}`,
      'assistant stop: text "It may not have been read."',
      'task_metadata turns=1 subAgents=0',
    ])
    const finished = await agent.continue().done.catch((e: unknown) => e)
    expect(AgentError.is(finished) && finished.code).toBe('nothing_to_continue')
  })
})
