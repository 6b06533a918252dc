import { defineSubAgent, defineTool, pendingApprovals } from '@kode/core'
import type { RecordedRequest, ScriptedResponse } from '@kode/providers/testing'
import { replaySession } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, gate, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'
import { comparableReplay, expectedReplay } from './replay-parity/expected.js'

type Messages = { role: string; content?: unknown }[]

/**
 * Parent: calls `delegate` (whose sub-agent asks to write a file, which needs approval) and `slow`
 * in one response. `slow` stops the task once the sub-agent has paused and `delegate` has returned:
 * `stop` interrupts it (or fails it, as a throwing listener would).
 */
function world(stop: () => void) {
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
  const returned = gate()
  const delegate = defineTool({
    name: 'delegate',
    description: 'Delegates to a writer',
    parameters: Type.Object({}),
    async execute(_args, ctx) {
      const outcome = await ctx.runSubAgent(
        { name: 'writer', system: 'You write.', tools: [writeFile] },
        'Write a.txt',
      )
      returned.open()
      return outcome.text
    },
  })
  const slow = defineTool({
    name: 'slow',
    description: 'Takes its time',
    parameters: Type.Object({}),
    async execute(_args, ctx) {
      await returned.promise
      // Past the engine's own bookkeeping of the returned call (promise callbacks, no I/O).
      await new Promise((resolve) => setImmediate(resolve))
      stop()
      // What a host failure needs to happen: an event (its listener throws).
      ctx.progress('still working')
      // It never finishes on its own.
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
      return 'late'
    },
  })
  const route = (request: RecordedRequest): ScriptedResponse => {
    const messages = (request.body as { messages: Messages }).messages
    if (messages[0]?.content === 'You write.') {
      return chatStream({ id: 'r-child-1', steps: [call('w1', 'write_file', { path: 'a.txt' })] })
    }
    if (messages.at(-1)!.content !== 'Go') return textReply('r-parent-2', 'Parent done.')
    return chatStream({ id: 'r-parent-1', steps: [call('p1', 'delegate', {}), call('p2', 'slow', {})] })
  }
  return { written, tools: [delegate, slow], route }
}

describe('a sub-agent that paused for approval as the parent task stops', () => {
  const harness = useHarness('file')

  test('an interrupt answers the call that ran it and settles the sub-agent: nothing stays pending, live is replay', async () => {
    const h = harness()
    const controller = new AbortController()
    const { written, tools, route } = world(() => controller.abort())
    h.server.handle(route)
    const agent = h.createAgent({ tools })
    const { events, outcome } = await collect(agent.run('Go', { signal: controller.signal }))
    expectOrdered(events)
    expect(outcome.reason).toBe('aborted')
    expect(outcome.pendingApprovals).toBeUndefined()
    expect(written).toEqual([])
    const denied = 'denied by the user: the user interrupted the task before deciding'
    const running = 'The user interrupted this tool call before it finished.'
    expect(summarize(events).slice(8)).toEqual([
      'tool_call p1 delegate {}',
      'tool_call p2 slow {}',
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
      '[id3] task_start sub-agent writer',
      '[id3] turn_start',
      '[id3] tool_approval_decision w1 denied: the user interrupted the task before deciding',
      '[id3] tool_call w1 write_file {"path":"a.txt"}',
      `[id3] tool_result w1 error (last): ${denied}`,
      '[id3] turn_end',
      '[id3] interrupt',
      '[id3] task_metadata turns=0 subAgents=0',
      '[id3] task_finish aborted: ',
      `tool_result p1 error: ${running}`,
      `tool_result p2 error (last): ${running}`,
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=2',
      'task_finish aborted: ',
    ])
    const parent = await agent.history()
    expectValidHistory(parent)
    expect(pendingApprovals(parent)).toEqual([])
    expect(summarizeHistory(parent)).toEqual([
      'user: Go',
      'assistant tool_use: call p1 delegate {} | call p2 slow {}',
      `tool p1 aborted: ${running}`,
      `tool p2 aborted: ${running}`,
      'task_metadata turns=1 subAgents=2',
    ])
    // The parent's result links the sub-agent, as an interrupted sub-agent's call does.
    expect(events.find((e) => e.type === 'tool_result' && e.toolCallId === 'p1')).toMatchObject({
      uiExtra: { type: 'session', sessionId: 'id3' },
    })
    const child = await h.store.read('id3')
    expectValidHistory(child)
    expect(pendingApprovals(child)).toEqual([])
    // The replay is the live events (less what it shows by design: see replay-parity.test.ts).
    const store = h.reopenStore()
    const histories = new Map([
      [agent.sessionId, parent],
      ['id3', child],
    ])
    const replay = await replaySession(store, agent.sessionId)
    expectOrdered(replay)
    expect(comparableReplay(replay, histories)).toEqual(expectedReplay(events, histories))
    // The session goes on.
    expect((await collect(agent.run('Again'))).outcome.reason).toBe('completed')
  })

  test('a host failure answers it as failed and settles the sub-agent as failed', async () => {
    const h = harness()
    let fail = false
    const { written, tools, route } = world(() => {
      fail = true
    })
    h.server.handle(route)
    const agent = h.createAgent({ tools })
    agent.events.on('event', () => {
      if (fail) {
        fail = false
        throw new Error('listener broke')
      }
    })
    const run = agent.run('Go')
    const events: import('@kode/protocol').Event[] = []
    await expect(
      (async () => {
        for await (const event of run) events.push(event)
      })(),
    ).rejects.toThrow('listener broke')
    expectOrdered(events)
    expect(written).toEqual([])
    const parent = await agent.history()
    expectValidHistory(parent)
    expect(pendingApprovals(parent)).toEqual([])
    const child = await h.store.read('id3')
    expectValidHistory(child)
    expect(pendingApprovals(child)).toEqual([])
    expect(
      summarize(events).filter(
        (line) =>
          line.startsWith('[id3] task_finish') ||
          line.startsWith('tool_result') ||
          line.startsWith('task_finish'),
      ),
    ).toEqual([
      '[id3] task_finish awaiting_approval: ',
      '[id3] task_finish error: ',
      'tool_result p1 error: The task failed before this tool call finished: An event listener threw: listener broke',
      'tool_result p2 error (last): The task failed before this tool call finished: An event listener threw: listener broke',
      'task_finish error: ',
    ])
  })

  test('an interrupt as the sub-agent ends its task paused settles it too: its call is answered, nothing stays pending', async () => {
    const h = harness()
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
      description: 'Writes',
      system: 'You write.',
      tools: [writeFile],
    })
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You write.') {
        return chatStream({ id: 'r-child-1', steps: [call('w1', 'write_file', { path: 'a.txt' })] })
      }
      if (messages.at(-1)!.content !== 'Go') return textReply('r-parent-2', 'Parent done.')
      return chatStream({ id: 'r-parent-1', steps: [call('p1', 'writer', { prompt: 'Write a.txt' })] })
    })
    const agent = h.createAgent({ tools: [writer] })
    const controller = new AbortController()
    // The sub-agent's task has paused; its parent's call has not returned yet.
    agent.events.on('task_finish', (event) => {
      if (event.sessionId !== agent.sessionId) controller.abort()
    })
    const { events, outcome } = await collect(agent.run('Go', { signal: controller.signal }))
    expectOrdered(events)
    expect(outcome.reason).toBe('aborted')
    expect(written).toEqual([])
    const denied = 'denied by the user: the user interrupted the task before deciding'
    expect(summarize(events).slice(-15)).toEqual([
      '[id3] task_finish awaiting_approval: ',
      '[id3] task_start sub-agent writer',
      '[id3] turn_start',
      '[id3] tool_approval_decision w1 denied: the user interrupted the task before deciding',
      '[id3] tool_call w1 write_file {"path":"a.txt"}',
      `[id3] tool_result w1 error (last): ${denied}`,
      '[id3] turn_end',
      '[id3] interrupt',
      '[id3] task_metadata turns=0 subAgents=0',
      '[id3] task_finish aborted: ',
      'tool_result p1 error (last): The user interrupted this tool call before it finished.',
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=2',
      'task_finish aborted: ',
    ])
    const parent = await agent.history()
    const child = await h.store.read('id3')
    for (const history of [parent, child]) {
      expectValidHistory(history)
      expect(pendingApprovals(history)).toEqual([])
    }
    const histories = new Map([
      [agent.sessionId, parent],
      ['id3', child],
    ])
    const replay = await replaySession(h.reopenStore(), agent.sessionId)
    expect(comparableReplay(replay, histories)).toEqual(expectedReplay(events, histories))
  })
})

describe('a sub-agent that paused for approval as the time limit of the call that ran it ran out', () => {
  const harness = useHarness('file')
  afterEach(() => {
    vi.useRealTimers()
  })

  test('the call gets its timeout result and the sub-agent its denial: nothing stays pending, live is replay', async () => {
    const h = harness()
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
    const delegate = defineTool({
      name: 'delegate',
      description: 'Delegates to a writer',
      parameters: Type.Object({}),
      timeoutMs: 50,
      async execute(_args, ctx) {
        await ctx.runSubAgent({ name: 'writer', system: 'You write.', tools: [writeFile] }, 'Write a.txt')
        // The writer has paused; the call's time limit runs out now (the clock is the test's).
        vi.advanceTimersByTime(50)
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
        return 'late'
      },
    })
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You write.') {
        return chatStream({ id: 'r-child-1', steps: [call('w1', 'write_file', { path: 'a.txt' })] })
      }
      if (messages.at(-1)!.content !== 'Go') return textReply('r-parent-2', 'Parent done.')
      return chatStream({ id: 'r-parent-1', steps: [call('p1', 'delegate', {})] })
    })
    const agent = h.createAgent({ tools: [delegate] })
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const { events, outcome } = await collect(agent.run('Go'))
    vi.useRealTimers()
    expectOrdered(events)
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Parent done.' })
    expect(outcome.pendingApprovals).toBeUndefined()
    expect(written).toEqual([])
    const reason = 'the tool call that ran this sub-agent timed out before the user decided'
    const limit = 'The sub-agent stopped at its time limit: tool "delegate" timed out after 50 ms.'
    expect(summarize(events).slice(-25)).toEqual([
      '[id3] tool_approval_request w1 write_file {"path":"a.txt"}',
      '[id3] turn_end',
      '[id3] task_metadata turns=1 subAgents=0',
      '[id3] task_finish awaiting_approval: ',
      '[id3] task_start sub-agent writer',
      '[id3] turn_start',
      `[id3] tool_approval_decision w1 denied: ${reason}`,
      '[id3] tool_call w1 write_file {"path":"a.txt"}',
      `[id3] tool_result w1 error (last): denied by the user: ${reason}`,
      '[id3] turn_end',
      `[id3] error: ${limit}`,
      '[id3] task_metadata turns=0 subAgents=0',
      '[id3] task_finish error: ',
      'tool_result p1 error (last): Tool "delegate" timed out after 50 ms.',
      'turn_end',
      'turn_start',
      'assistant_text_start',
      'text: Parent done.',
      'assistant_text_end',
      'response_complete: Parent done.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=2 subAgents=2',
      'task_finish completed: Parent done.',
    ])
    const parent = await agent.history()
    const child = await h.store.read('id3')
    for (const history of [parent, child]) {
      expectValidHistory(history)
      expect(pendingApprovals(history)).toEqual([])
    }
    expect(summarizeHistory(parent).slice(0, 3)).toEqual([
      'user: Go',
      'assistant tool_use: call p1 delegate {}',
      'tool p1 error: Tool "delegate" timed out after 50 ms.',
    ])
    // The parent's result links the sub-agent, as any timed-out sub-agent's call does.
    expect(events.find((e) => e.type === 'tool_result' && e.toolCallId === 'p1')).toMatchObject({
      uiExtra: { type: 'session', sessionId: 'id3' },
    })
    expect(child.find((record) => 'type' in record && record.type === 'error')).toMatchObject({
      message: limit,
      code: 'timeout',
    })
    const histories = new Map([
      [agent.sessionId, parent],
      ['id3', child],
    ])
    const replay = await replaySession(h.reopenStore(), agent.sessionId)
    expectOrdered(replay)
    expect(comparableReplay(replay, histories)).toEqual(expectedReplay(events, histories))
  })
})
