import { type Agent, defineTool } from '@kode/core'
import { checkEventOrder, type Event, type HistoryEvent, isInterrupt } from '@kode/protocol'
import type { RecordedRequest } from '@kode/providers/testing'
import { replaySession } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say, textReply, think } from './helpers/chat-wire.js'
import { collect, delay, gate, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'
import { comparableReplay, expectedReplay } from './replay-parity/expected.js'

const work = defineTool({
  name: 'work',
  description: 'Works for a while',
  parameters: Type.Object({ ms: Type.Number() }),
  execute: async ({ ms }, ctx) => {
    await delay(ms)
    ctx.progress('half')
    await delay(ms)
    return `worked ${ms}`
  },
})

/**
 * Answers by conversation state, so an interrupted task leaves nothing queued behind: the first
 * request gets thinking, text and two parallel tool calls; one whose last message is a tool
 * result gets the final text; a follow-up (`again`) gets its own answer.
 */
function script(request: RecordedRequest) {
  const messages = (request.body as { messages: { role: string; content?: unknown }[] }).messages
  const last = messages.at(-1)!
  if (last.role === 'user' && last.content === 'again') return textReply('r-again', 'Welcome back.')
  if (last.role === 'tool') return chatStream({ id: 'r2', steps: [say('Both are done, all good.')] })
  return chatStream({
    id: 'r1',
    steps: [
      think('I should run both jobs in parallel.'),
      say('Starting both jobs now.'),
      call('c1', 'work', { ms: 4 }),
      call('c2', 'work', { ms: 1 }),
    ],
  })
}

/**
 * Runs `input`, aborting from a synchronous listener when the `abortAt`-th event (from 0) is
 * emitted, so the engine is interrupted exactly at that event, not wherever it has got to by the
 * time an iterator behind it sees the event.
 */
async function runAborting(agent: Agent, input: string, abortAt: number) {
  const controller = new AbortController()
  let index = 0
  const listener = () => {
    if (index++ === abortAt) controller.abort()
  }
  agent.events.on('event', listener)
  try {
    return await collect(agent.run(input, { signal: controller.signal }))
  } finally {
    agent.events.off('event', listener)
  }
}

/** Events a response emits while it streams (and `turn_start`, just before its request). */
const STREAMING = new Set<Event['type']>([
  'turn_start',
  'thinking_start',
  'thinking_delta',
  'thinking_end',
  'assistant_text_start',
  'assistant_text_delta',
  'assistant_text_end',
  'tool_call_start',
])

/**
 * Whether the `index`-th event of a run comes before its response has completed: a streaming
 * event, except the end of the last open stream, which the response's end emits right before
 * `response_complete` (the response is complete by then).
 */
function midStream(events: readonly Event[], index: number): boolean {
  const { type } = events[index]!
  const closing = type === 'thinking_end' || type === 'assistant_text_end'
  return STREAMING.has(type) && !(closing && events[index + 1]?.type === 'response_complete')
}

/** How the history records the interrupt of the last task. */
function interruptKind(history: readonly HistoryEvent[]): string {
  const marker = history.findLast(isInterrupt)
  if (!marker) return 'none'
  if (!('role' in marker)) return 'interrupt record'
  return marker.role === 'assistant' ? 'aborted response' : 'aborted tool result'
}

describe.each(['memory', 'file'] as const)('interrupts (%s store)', (kind) => {
  const harness = useHarness(kind)

  test('aborting at every event index leaves valid events and history, and the session continues', async () => {
    const h = harness()
    h.server.handle(script)
    const baseline = await collect(h.createAgent({ tools: [work] }).run('go'))
    expect(baseline.outcome.reason).toBe('completed')
    const total = baseline.events.length
    expect(total).toBeGreaterThan(25)

    const kinds = new Set<string>()
    let midStreamAborts = 0
    for (let i = 0; i < total; i++) {
      const agent = h.createAgent({ tools: [work] })
      const { events, outcome } = await runAborting(agent, 'go', i)
      const where = `abort at event ${i} (${baseline.events[i]?.type})`
      // Checked here rather than by expectOrdered so a failure names the index.
      expect(checkEventOrder(events), where).toEqual([])
      const history = await agent.history()
      expectValidHistory(history)
      if (midStream(baseline.events, i)) {
        // Interrupted while the response streamed: it never completes.
        midStreamAborts++
        expect(outcome.reason, where).toBe('aborted')
        expect(
          events.slice(i + 1).filter((e) => e.type === 'response_complete'),
          where,
        ).toEqual([])
      }
      if (outcome.reason === 'aborted') {
        expect(
          events.filter((e) => e.type === 'interrupt'),
          where,
        ).toHaveLength(1)
        expect(summarize(events).at(-1), where).toMatch(/^task_finish aborted/)
        kinds.add(interruptKind(history))
      } else {
        expect(outcome.reason, where).toBe('completed')
      }

      const next = await collect(agent.run('again'))
      expect(checkEventOrder(next.events), where).toEqual([])
      expect(next.outcome, where).toMatchObject({ reason: 'completed', text: 'Welcome back.' })
      expectValidHistory(await agent.history())
    }
    // Both responses, from their turn_start to their last delta, were interrupted while streaming.
    expect(midStreamAborts).toBe(25)
    // The sweep hit an interrupt before any output, mid-response, and during the tools.
    expect([...kinds].sort()).toEqual(['aborted response', 'aborted tool result', 'interrupt record'])
  }, 60_000) // one task per event index: minutes on a loaded machine, not a speed check
})

describe('interrupts', () => {
  const harness = useHarness()

  test('during a tool: the tool is signalled, its call gets an aborted result, then interrupt', async () => {
    const h = harness()
    const started = gate()
    let toolSignal: AbortSignal | undefined
    const hang = defineTool({
      name: 'hang',
      description: 'Runs until interrupted',
      parameters: Type.Object({}),
      execute: (_args, ctx) => {
        toolSignal = ctx.signal
        started.open()
        return new Promise<string>(() => {})
      },
    })
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'hang', {}), call('c2', 'hang', {})] }))
    const agent = h.createAgent({ tools: [hang], toolConcurrency: 1 })
    const controller = new AbortController()
    const run = agent.run('go', { signal: controller.signal })
    await started.promise
    controller.abort()
    const { events, outcome } = await collect(run)

    expectOrdered(events)
    expect(toolSignal?.aborted).toBe(true)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: go',
      'turn_start',
      'tool_call_start c1 hang',
      'tool_call_start c2 hang',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 hang {}',
      // Interrupted while it waited for a slot: announced before the first result, as in the replay.
      'tool_call c2 hang {}',
      'tool_result c1 error: The user interrupted this tool call before it finished.',
      'tool_result c2 error (last): The user interrupted the task before this tool call ran.',
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish aborted: ',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: go',
      'assistant tool_use: call c1 hang {} | call c2 hang {}',
      'tool c1 aborted: The user interrupted this tool call before it finished.',
      'tool c2 aborted: The user interrupted the task before this tool call ran.',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(outcome.reason).toBe('aborted')
  })

  test('break out of the loop interrupts the task and waits until it has persisted cleanly', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream(
        { id: 'r1', steps: [say('One two three four five six seven eight nine ten.')] },
        { chunkDelayMs: 2 },
      ),
      textReply('r2', 'Back.'),
    )
    const agent = h.createAgent()
    const emitted: Event[] = []
    agent.events.on('event', (event) => emitted.push(event))
    const run = agent.run('count')
    for await (const event of run) {
      if (event.type === 'assistant_text_delta') break
    }
    // The loop is left only once the task has ended: no waiting on `done` needed.
    expect(agent.running).toBe(false)
    expectOrdered(emitted)
    // The loop runs behind the engine, so how much text streamed before the break varies.
    expect(summarize(emitted)).toEqual([
      'task_start',
      'user_message: count',
      'turn_start',
      'assistant_text_start',
      expect.stringMatching(/^text: One/),
      'assistant_text_end',
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      expect.stringMatching(/^task_finish aborted: One/),
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: count',
      expect.stringMatching(/^assistant aborted: text "One/),
      'task_metadata turns=1 subAgents=0',
    ])
    expect((await run.done).reason).toBe('aborted')
    expect((await collect(agent.run('again'))).outcome.reason).toBe('completed')
  })

  test('a signal aborted before the run starts persists the input and an interrupt record', async () => {
    const h = harness()
    const agent = h.createAgent()
    const { events, outcome } = await collect(agent.run('never mind', { signal: AbortSignal.abort() }))
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: never mind',
      'interrupt',
      'task_metadata turns=0 subAgents=0',
      'task_finish aborted: ',
    ])
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: never mind',
      'interrupt',
      'task_metadata turns=0 subAgents=0',
    ])
    expect(outcome.reason).toBe('aborted')
    expect(h.server.requests).toHaveLength(0)
  })

  test('an interrupt while streaming closes the open stream and persists the partial response as aborted', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream(
        { id: 'r1', steps: [think('Thinking hard about this.'), say('Partial answer that goes on.')] },
        { chunkDelayMs: 1 },
      ),
    )
    const agent = h.createAgent()
    const controller = new AbortController()
    // Interrupted from a listener, so exactly at the first text delta.
    agent.events.on('assistant_text_delta', () => controller.abort())
    const { events } = await collect(agent.run('q', { signal: controller.signal }))
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: q',
      'turn_start',
      'thinking_start',
      'thinking: Thinking hard about this.',
      'thinking_end',
      'assistant_text_start',
      'text: Partial ',
      'assistant_text_end',
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish aborted: Partial ',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(history[1]).toMatchObject({ role: 'assistant', stopReason: 'aborted', responseId: 'r1' })
    expect(summarizeHistory(history)).toEqual([
      'user: q',
      'assistant aborted: thinking "Thinking hard about this." | text "Partial "',
      'task_metadata turns=1 subAgents=0',
    ])
  })
})

describe('an interrupt at every event index, replayed', () => {
  const harness = useHarness()
  const ask = defineTool({
    name: 'ask',
    description: 'Needs the user’s approval',
    parameters: Type.Object({}),
    needsApproval: true,
    execute: () => 'asked',
  })
  /** Two parallel jobs around a call that waits for approval, then a final answer. */
  const withApproval = (request: RecordedRequest) => {
    const messages = (request.body as { messages: { role: string }[] }).messages
    if (messages.at(-1)!.role === 'tool') return textReply('r2', 'Both are done.')
    return chatStream({
      id: 'r1',
      steps: [
        think('I should.'),
        say('Starting.'),
        call('c1', 'work', { ms: 4 }),
        call('c2', 'ask', {}),
        call('c3', 'work', { ms: 1 }),
      ],
    })
  }
  /** The events without `interrupt`: replay shows one per aborted result, live one per turn (docs/sessions.md). */
  const withoutInterrupts = (events: readonly unknown[]) =>
    events.filter((event) => (event as { type: string }).type !== 'interrupt')

  test('shows every call where the live run announced it', async () => {
    const h = harness()
    h.server.handle(withApproval)
    const baseline = await collect(h.createAgent({ tools: [work, ask] }).run('go'))
    expect(baseline.outcome.reason).toBe('awaiting_approval')
    for (let i = 0; i < baseline.events.length; i++) {
      const agent = h.createAgent({ tools: [work, ask] })
      const { events } = await runAborting(agent, 'go', i)
      const history = await agent.history()
      const histories = new Map([[agent.sessionId, history]])
      const replay = await replaySession(h.store, agent.sessionId)
      expect(
        withoutInterrupts(comparableReplay(replay, histories)),
        `abort at event ${i} (${baseline.events[i]?.type})`,
      ).toEqual(withoutInterrupts(expectedReplay(events, histories)))
    }
  }, 60_000)
})
