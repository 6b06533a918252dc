import { AgentError, defineSubAgent, defineTool } from '@kode/core'
import type { Event } from '@kode/protocol'
import type { RecordedRequest, ScriptedResponse } from '@kode/providers/testing'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say, stalledChatStream, textReply } from './helpers/chat-wire.js'
import { collect, gate, type Harness, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { replayedPart, replayOf } from './helpers/replayed.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'

const harness = useHarness()

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a topic up',
  parameters: Type.Object({ topic: Type.String() }),
  execute: ({ topic }) => `facts about ${topic}`,
})

const researcher = defineSubAgent({
  name: 'researcher',
  description: 'Researches a topic and reports back',
  system: 'You research.',
  tools: [lookup],
})

type Messages = { role: string; content?: unknown }[]

/**
 * Parent: calls the researcher twice in one response, then summarises. Each child looks its topic
 * up, then answers, streaming slowly enough that the two children's events interleave.
 */
function route(request: RecordedRequest): ScriptedResponse {
  const messages = (request.body as { messages: Messages }).messages
  const last = messages.at(-1)!
  if (messages[0]?.content === 'You research.') {
    const topic = String(messages[1]?.content)
    if (last.role === 'tool') {
      return chatStream(
        { id: `r-${topic}-2`, steps: [say(`Report on ${topic}: it is well known.`)] },
        { chunkDelayMs: 2 },
      )
    }
    return chatStream(
      { id: `r-${topic}-1`, steps: [call(`l-${topic}`, 'lookup', { topic })] },
      { chunkDelayMs: 1 },
    )
  }
  if (last.role === 'tool') return textReply('r-parent-2', 'Both reports are in.')
  return chatStream({
    id: 'r-parent-1',
    steps: [
      call('c1', 'researcher', { prompt: 'cats', description: 'Research cats' }),
      call('c2', 'researcher', { prompt: 'dogs', description: 'Research dogs' }),
    ],
  })
}

describe('sub-agents', () => {
  test('run concurrently in their own sessions; their events interleave on the parent stream', async () => {
    const h = harness()
    h.server.handle(route)
    const agent = h.createAgent({ tools: [researcher] })
    const emitted: Event[] = []
    agent.events.on('event', (event) => emitted.push(event))
    const { events, outcome } = await collect(agent.run('Research cats and dogs'))

    expectOrdered(events)
    expect(emitted).toEqual(events)
    const sessions = [...new Set(events.map((e) => e.sessionId))]
    expect(sessions).toEqual(['id1', 'id3', 'id4'])
    const [, cats, dogs] = sessions as [string, string, string]

    // Both children are running at once: each one's events fall inside the other's task.
    const span = (id: string) => [
      events.findIndex((e) => e.sessionId === id),
      events.findLastIndex((e) => e.sessionId === id),
    ]
    const [catsStart, catsEnd] = span(cats)
    const [dogsStart, dogsEnd] = span(dogs)
    expect(dogsStart).toBeLessThan(catsEnd!)
    expect(catsStart).toBeLessThan(dogsEnd!)

    expect(events.find((e) => e.type === 'task_start' && e.sessionId === cats)).toMatchObject({
      subAgentState: {
        name: 'researcher',
        parentSessionId: 'id1',
        parentToolCallId: 'c1',
        description: 'Research cats',
      },
    })
    expect(
      summarize(
        events.filter((e) => e.sessionId === cats),
        cats,
      ),
    ).toEqual([
      'task_start sub-agent researcher',
      'user_message: cats',
      'turn_start',
      'tool_call_start l-cats lookup',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call l-cats lookup {"topic":"cats"}',
      'tool_result l-cats success (last): facts about cats',
      'turn_end',
      'turn_start',
      'assistant_text_start',
      'text: Report on cats: it is well known.',
      'assistant_text_end',
      'response_complete: Report on cats: it is well known.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=2 subAgents=0',
      'task_finish completed: Report on cats: it is well known.',
    ])
    expect(summarize(events.filter((e) => e.sessionId === 'id1'))).toEqual([
      'task_start',
      'user_message: Research cats and dogs',
      'turn_start',
      'tool_call_start c1 researcher',
      'tool_call_start c2 researcher',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 researcher {"prompt":"cats","description":"Research cats"}',
      'tool_call c2 researcher {"prompt":"dogs","description":"Research dogs"}',
      'tool_result c1 success: Report on cats: it is well known.',
      'tool_result c2 success (last): Report on dogs: it is well known.',
      'turn_end',
      'turn_start',
      'assistant_text_start',
      'text: Both reports are in.',
      'assistant_text_end',
      'response_complete: Both reports are in.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=2 subAgents=2',
      'task_finish completed: Both reports are in.',
    ])

    // The parent's result links the child session and carries its accounting.
    const catsResult = events.find((e) => e.type === 'tool_result' && e.toolCallId === 'c1')
    expect(catsResult).toMatchObject({
      uiExtra: { type: 'session', sessionId: cats },
      taskMetadata: { sessionId: cats, subAgentName: 'researcher', turnCount: 2, model: 'gpt-4o' },
    })
    expect(outcome.metadata.subAgents.map((m) => m.sessionId)).toEqual([cats, dogs])
    expect(outcome.metadata.main.usage?.inputTokens).toBe(200)
    expect(outcome.metadata.subAgents[0]?.usage?.inputTokens).toBe(200)

    // Each child's session is linked to the parent and holds a valid history of its own.
    expect(await h.store.info(cats)).toMatchObject({
      parentSessionId: 'id1',
      subAgent: { name: 'researcher', parentToolCallId: 'c1' },
    })
    const childHistory = await h.store.read(cats)
    expectValidHistory(childHistory)
    expect(summarizeHistory(childHistory)).toEqual([
      'system: You research.',
      'user: cats',
      'assistant tool_use: call l-cats lookup {"topic":"cats"}',
      'tool l-cats success: facts about cats',
      'assistant stop: text "Report on cats: it is well known."',
      'task_metadata turns=2 subAgents=0',
    ])
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: Research cats and dogs',
      'assistant tool_use: call c1 researcher {"prompt":"cats","description":"Research cats"} | call c2 researcher {"prompt":"dogs","description":"Research dogs"}',
      'tool c1 success: Report on cats: it is well known.',
      'tool c2 success: Report on dogs: it is well known.',
      'assistant stop: text "Both reports are in."',
      'task_metadata turns=2 subAgents=2',
    ])
  })

  test("the parent's accounting lists its sub-agents in call order, whichever ends first", async () => {
    const h = harness()
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You research.') {
        const topic = String(messages[1]?.content)
        // The first call's child ends last.
        return chatStream(
          { id: `r-${topic}`, steps: [say(`Report on ${topic}.`)] },
          topic === 'slow' ? { chunkDelayMs: 20 } : {},
        )
      }
      if (messages.at(-1)!.role === 'tool') return textReply('r-parent-2', 'Done.')
      return chatStream({
        id: 'r-parent-1',
        steps: [call('c1', 'researcher', { prompt: 'slow' }), call('c2', 'researcher', { prompt: 'fast' })],
      })
    })
    const agent = h.createAgent({ tools: [researcher] })
    const { events, outcome } = await collect(agent.run('Research both'))
    expectOrdered(events)
    const finishes = events.filter((e) => e.type === 'task_finish').map((e) => e.taskResult)
    expect(finishes).toEqual(['Report on fast.', 'Report on slow.', 'Done.'])
    const childOf = (callId: string) =>
      events.find((e) => e.type === 'task_start' && e.subAgentState?.parentToolCallId === callId)!.sessionId
    expect(outcome.metadata.subAgents.map((m) => m.sessionId)).toEqual([childOf('c1'), childOf('c2')])
    expect(events.findLast((e) => e.type === 'task_metadata')).toMatchObject({ metadata: outcome.metadata })
  })

  test('a parent interrupt cascades: children end interrupted with valid histories before the parent finishes', async () => {
    const h = harness()
    // As `route`, but each child's report streams one word and stalls, so both children are
    // mid-report when the parent is interrupted.
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You research.' && messages.at(-1)!.role === 'tool') {
        return stalledChatStream({ id: `r-${String(messages[1]?.content)}-2`, steps: [say('Reporting')] })
      }
      return route(request)
    })
    const agent = h.createAgent({ tools: [researcher] })
    const controller = new AbortController()
    // Interrupt from a listener, at the engine's own pace, once both children are reporting.
    const reporting = new Set<string>()
    agent.events.on('assistant_text_delta', (event) => {
      reporting.add(event.sessionId)
      if (reporting.size === 2) controller.abort()
    })
    const run = agent.run('Research cats and dogs', { signal: controller.signal })
    const { events, outcome } = await collect(run)

    expectOrdered(events)
    expect(outcome.reason).toBe('aborted')
    const childOf = (callId: string) =>
      events.find((e) => e.type === 'task_start' && e.subAgentState?.parentToolCallId === callId)!.sessionId
    const children = { cats: childOf('c1'), dogs: childOf('c2') }
    expect(new Set(events.map((e) => e.sessionId))).toEqual(new Set(['id1', children.cats, children.dogs]))
    // The children (in whichever order they stop) end before the parent does.
    expect(events.findLast((e) => e.type === 'task_finish')?.sessionId).toBe('id1')

    for (const [topic, id] of Object.entries(children)) {
      expect(
        summarize(
          events.filter((e) => e.sessionId === id),
          id,
        ),
        topic,
      ).toEqual([
        'task_start sub-agent researcher',
        `user_message: ${topic}`,
        'turn_start',
        `tool_call_start l-${topic} lookup`,
        'response_complete: ',
        'usage 100/20',
        'context_usage 120/128000',
        `tool_call l-${topic} lookup {"topic":"${topic}"}`,
        `tool_result l-${topic} success (last): facts about ${topic}`,
        'turn_end',
        'turn_start',
        'assistant_text_start',
        'text: Reporting',
        'assistant_text_end',
        'interrupt',
        'turn_end',
        'task_metadata turns=2 subAgents=0',
        'task_finish aborted: Reporting',
      ])
      const history = await h.store.read(id)
      expectValidHistory(history)
      expect(summarizeHistory(history), topic).toEqual([
        'system: You research.',
        `user: ${topic}`,
        `assistant tool_use: call l-${topic} lookup {"topic":"${topic}"}`,
        `tool l-${topic} success: facts about ${topic}`,
        'assistant aborted: text "Reporting"',
        'task_metadata turns=2 subAgents=0',
      ])
    }

    const interrupted = 'The user interrupted this tool call before it finished.'
    expect(summarize(events.filter((e) => e.sessionId === 'id1'))).toEqual([
      'task_start',
      'user_message: Research cats and dogs',
      'turn_start',
      'tool_call_start c1 researcher',
      'tool_call_start c2 researcher',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 researcher {"prompt":"cats","description":"Research cats"}',
      'tool_call c2 researcher {"prompt":"dogs","description":"Research dogs"}',
      `tool_result c1 error: ${interrupted}`,
      `tool_result c2 error (last): ${interrupted}`,
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=2',
      'task_finish aborted: ',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Research cats and dogs',
      'assistant tool_use: call c1 researcher {"prompt":"cats","description":"Research cats"} | call c2 researcher {"prompt":"dogs","description":"Research dogs"}',
      `tool c1 aborted: ${interrupted}`,
      `tool c2 aborted: ${interrupted}`,
      'task_metadata turns=1 subAgents=2',
    ])
  })

  test('a child that fails gives the parent an error result, and the parent goes on', async () => {
    const h = harness()
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You research.') {
        return { status: 400, body: JSON.stringify({ error: { message: 'bad request' } }) }
      }
      if (messages.at(-1)!.role === 'tool') return textReply('r-parent-2', 'It failed.')
      return chatStream({ id: 'r-parent-1', steps: [call('c1', 'researcher', { prompt: 'cats' })] })
    })
    const agent = h.createAgent({ tools: [researcher] })
    const { events, outcome } = await collect(agent.run('Research cats'))
    expectOrdered(events)
    const result = events.find((e) => e.type === 'tool_result' && e.sessionId === 'id1')
    expect(result).toMatchObject({ status: 'error', uiExtra: { type: 'session' } })
    const child = events.find((e) => e.sessionId !== 'id1')!.sessionId
    expect(
      summarize(
        events.filter((e) => e.sessionId === child),
        child,
      ),
    ).toEqual([
      'task_start sub-agent researcher',
      'user_message: cats',
      'turn_start',
      expect.stringMatching(/^error: .*bad request/),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish error: ',
    ])
    expect(summarize(events.filter((e) => e.sessionId === 'id1'))).toEqual([
      'task_start',
      'user_message: Research cats',
      'turn_start',
      'tool_call_start c1 researcher',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 researcher {"prompt":"cats"}',
      expect.stringMatching(
        /^tool_result c1 error \(last\): The sub-agent researcher stopped early: .*bad request/,
      ),
      'turn_end',
      'turn_start',
      'assistant_text_start',
      'text: It failed.',
      'assistant_text_end',
      'response_complete: It failed.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=2 subAgents=1',
      'task_finish completed: It failed.',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Research cats',
      'assistant tool_use: call c1 researcher {"prompt":"cats"}',
      expect.stringMatching(/^tool c1 error: The sub-agent researcher stopped early: .*bad request/),
      'assistant stop: text "It failed."',
      'task_metadata turns=2 subAgents=1',
    ])
    expect(summarizeHistory(await h.store.read(child))).toEqual([
      'system: You research.',
      'user: cats',
      expect.stringMatching(/^error: .*bad request/),
      'task_metadata turns=1 subAgents=0',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', text: 'It failed.' })
  })
})

describe('an interrupted sub-agent call', () => {
  const searchText = defineTool({
    name: 'search_text',
    description: 'Searches, until interrupted',
    parameters: Type.Object({}),
    execute: (_args, ctx) =>
      new Promise<string>((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(new Error('stopped')))
      }),
  })
  const explore = defineSubAgent({
    name: 'explore',
    description: 'Explores',
    system: 'You explore.',
    tools: [searchText],
  })

  // The moments a user may interrupt the child: as it starts, streams, runs a tool, or finishes.
  test.each([
    ['starts', 'task_start'],
    ['streams', 'assistant_text_delta'],
    ['runs a tool', 'tool_call'],
    ['finishes', 'task_finish'],
  ] as const)('is recorded aborted, like any interrupted call, when the child %s', async (_moment, type) => {
    const h = harness()
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You explore.') {
        if (type === 'assistant_text_delta')
          return stalledChatStream({ id: 'r-child', steps: [say('Looking')] })
        if (type === 'task_finish') return textReply('r-child', 'In core.')
        return chatStream({ id: 'r-child', steps: [call('k1', 'search_text', {})] })
      }
      return chatStream({ id: 'r1', steps: [call('e1', 'explore', { prompt: 'Find createAgent' })] })
    })
    const agent = h.createAgent({ tools: [explore] })
    const controller = new AbortController()
    agent.events.on('event', (event) => {
      if (event.sessionId !== agent.sessionId && event.type === type) controller.abort(new Error('stop'))
    })
    const { events, outcome } = await collect(
      agent.run('Where is createAgent?', { signal: controller.signal }),
    )
    expectOrdered(events)
    expect(outcome.reason).toBe('aborted')
    const interrupted = 'The user interrupted this tool call before it finished.'
    expect(summarizeHistory(await agent.history()).slice(2)).toEqual([
      `tool e1 aborted: ${interrupted}`,
      'task_metadata turns=1 subAgents=1',
    ])
    const child = events.find(
      (e) => e.type === 'task_start' && e.subAgentState?.name === 'explore',
    )!.sessionId
    // A child that had finished keeps its outcome; the parent's call had not returned yet.
    expect(events.findLast((e) => e.type === 'task_finish' && e.sessionId === child)).toMatchObject({
      reason: type === 'task_finish' ? 'completed' : 'aborted',
    })
    expectValidHistory(await h.store.read(child))
  })

  test("the parent's interrupted result comes once the child has closed its session, and links it", async () => {
    const h = harness()
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You explore.')
        return chatStream({ id: 'r-child', steps: [call('k1', 'search_text', {})] })
      return chatStream({ id: 'r1', steps: [call('e1', 'explore', { prompt: 'Find createAgent' })] })
    })
    const agent = h.createAgent({ tools: [explore] })
    const controller = new AbortController()
    agent.events.on('event', (event) => {
      if (event.sessionId !== agent.sessionId && event.type === 'tool_call') controller.abort()
    })
    const { events } = await collect(agent.run('Where is createAgent?', { signal: controller.signal }))
    expectResultAfterChild(events, agent.sessionId, 'e1')
    const [, , result] = await agent.history()
    expect(result).toMatchObject({ status: 'aborted', uiExtra: { type: 'session' } })
  })
})

/**
 * The parent's `tool_result` for `callId` follows every event of the child it ran (its
 * `task_finish` included), and links the child's session with the child's accounting.
 */
function expectResultAfterChild(events: readonly Event[], parent: string, callId: string): void {
  const start = events.find((e) => e.type === 'task_start' && e.subAgentState?.parentToolCallId === callId)!
  const child = start.sessionId
  const result = events.findIndex(
    (e) => e.type === 'tool_result' && e.sessionId === parent && e.toolCallId === callId,
  )
  expect(events.findLastIndex((e) => e.sessionId === child)).toBeLessThan(result)
  expect(events[result]).toMatchObject({
    uiExtra: { type: 'session', sessionId: child },
    taskMetadata: { sessionId: child },
  })
}

describe('a sub-agent that runs out of time', () => {
  const slow = defineSubAgent({
    name: 'slow',
    description: 'Reports, slowly',
    system: 'You report.',
    timeoutMs: 300,
  })
  const limit = 'The sub-agent stopped at its time limit: tool "slow" timed out after 300 ms.'

  /** The child streams one word and stalls until its time limit; the parent then answers. */
  function stallingChild(h: Harness) {
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You report.') {
        return stalledChatStream({ id: 'r-child', steps: [say('Reporting')] })
      }
      if (messages.at(-1)!.role === 'tool') return textReply('r-parent-2', 'It took too long.')
      return chatStream({ id: 'r-parent-1', steps: [call('c1', 'slow', { prompt: 'cats' })] })
    })
  }

  test("its own session records an error naming the time limit, not the user's interrupt", async () => {
    const h = harness()
    stallingChild(h)
    const agent = h.createAgent({ tools: [slow] })
    const { events, outcome } = await collect(agent.run('Report on cats'))
    expectOrdered(events)
    expect(outcome).toMatchObject({ reason: 'completed', text: 'It took too long.' })
    const child = events.find((e) => e.type === 'task_start' && e.subAgentState?.name === 'slow')!.sessionId
    const childEvents = events.filter((e) => e.sessionId === child)
    expect(summarize(childEvents, child)).toEqual([
      'task_start sub-agent slow',
      'user_message: cats',
      'turn_start',
      'assistant_text_start',
      'text: Reporting',
      'assistant_text_end',
      `error: ${limit}`,
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish error: Reporting',
    ])
    const history = await h.store.read(child)
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'system: You report.',
      'user: cats',
      'assistant error: text "Reporting"',
      `error: ${limit}`,
      'task_metadata turns=1 subAgents=0',
    ])
    expect(history.find((record) => 'type' in record && record.type === 'error')).toMatchObject({
      code: 'timeout',
      canRetry: false,
    })
    // Its replay tells the same story as its live events (replay adds a failed message's
    // `response_complete`, as docs/sessions.md says).
    const replay = (replayOf(history, child) as { type: string }[]).filter(
      (e) => e.type !== 'response_complete',
    )
    expect(replay).toEqual(replayedPart(childEvents))
    // The parent's call says it timed out, as for any tool.
    expect(summarizeHistory(await agent.history()).slice(2, 3)).toEqual([
      'tool c1 error: Tool "slow" timed out after 300 ms.',
    ])
  })

  test("the parent's result comes once the child has closed its session, and links it", async () => {
    const h = harness()
    stallingChild(h)
    const agent = h.createAgent({ tools: [slow] })
    const { events } = await collect(agent.run('Report on cats'))
    expectResultAfterChild(events, agent.sessionId, 'c1')
  })

  test('a child it started stops with the same error', async () => {
    const inner = defineSubAgent({ name: 'inner', description: 'Inner', system: 'You report.' })
    const outer = defineSubAgent({
      name: 'outer',
      description: 'Delegates',
      system: 'You delegate.',
      tools: [inner],
      timeoutMs: 300,
    })
    const h = harness()
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You report.') {
        return stalledChatStream({ id: 'r-inner', steps: [say('Reporting')] })
      }
      if (messages[0]?.content === 'You delegate.') {
        return chatStream({ id: 'r-outer', steps: [call('i1', 'inner', { prompt: 'cats' })] })
      }
      if (messages.at(-1)!.role === 'tool') return textReply('r-parent-2', 'It took too long.')
      return chatStream({ id: 'r-parent-1', steps: [call('c1', 'outer', { prompt: 'cats' })] })
    })
    const agent = h.createAgent({ tools: [outer] })
    const { events } = await collect(agent.run('Report on cats'))
    const sessionOf = (name: string) =>
      events.find((e) => e.type === 'task_start' && e.subAgentState?.name === name)!.sessionId
    const nested = 'The sub-agent stopped at its time limit: tool "outer" timed out after 300 ms.'
    for (const name of ['outer', 'inner']) {
      const history = await h.store.read(sessionOf(name))
      expectValidHistory(history)
      expect(
        history.some((record) => 'type' in record && record.type === 'interrupt'),
        name,
      ).toBe(false)
      expect(
        history.find((record) => 'type' in record && record.type === 'error'),
        name,
      ).toMatchObject({ message: nested, code: 'timeout' })
      expect(
        events.findLast((e) => e.type === 'task_finish' && e.sessionId === sessionOf(name)),
      ).toMatchObject({ reason: 'error' })
    }
  })
})

describe('a tool of its own that runs sub-agents', () => {
  const spec = { name: 'helper', system: 'You help.' }

  /** Each child answers its input back; the parent calls `tool` once, then sums up. */
  function echoing(h: Harness, tool: string): void {
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You help.') {
        const input = String(messages[1]?.content)
        return textReply(`r-${input}`, `${input} done.`)
      }
      if (messages.at(-1)!.role === 'tool') return textReply('r-parent-2', 'Done.')
      return chatStream({ id: 'r-parent-1', steps: [call('c1', tool, {})] })
    })
  }

  const childrenOf = (events: readonly Event[]) =>
    events.filter((e) => e.type === 'task_start' && e.subAgentState).map((e) => e.sessionId)

  test('links every sub-agent it started, in start order, when it links none itself', async () => {
    const h = harness()
    echoing(h, 'trio')
    const trio = defineTool({
      name: 'trio',
      description: 'Runs three helpers at once',
      parameters: Type.Object({}),
      execute: async (_args, ctx) => {
        const outcomes = await Promise.all(['a', 'b', 'c'].map((input) => ctx.runSubAgent(spec, input)))
        return { outputText: outcomes.map((o) => o.text).join(' ') }
      },
    })
    const agent = h.createAgent({ tools: [trio] })
    const { events } = await collect(agent.run('Go'))
    const children = childrenOf(events)
    expect(children).toHaveLength(3)
    const [, , result] = await agent.history()
    expect(result).toMatchObject({
      outputText: 'a done. b done. c done.',
      uiExtra: { type: 'session', sessionId: children[0], moreSessionIds: children.slice(1) },
      taskMetadata: { sessionId: children[0] },
    })
  })

  test('keeps the link and the accounting a tool sets itself', async () => {
    const h = harness()
    echoing(h, 'pair')
    const pair = defineTool({
      name: 'pair',
      description: 'Runs two helpers, links the second',
      parameters: Type.Object({}),
      execute: async (_args, ctx) => {
        await ctx.runSubAgent(spec, 'a')
        const second = await ctx.runSubAgent(spec, 'b')
        return {
          outputText: second.text,
          uiExtra: { type: 'session', sessionId: second.sessionId },
          taskMetadata: second.metadata.main,
        }
      },
    })
    const agent = h.createAgent({ tools: [pair] })
    const { events } = await collect(agent.run('Go'))
    const [, second] = childrenOf(events)
    const [, , result] = await agent.history()
    expect(result).toMatchObject({
      uiExtra: { type: 'session', sessionId: second },
      taskMetadata: { sessionId: second },
    })
    expect((result as { uiExtra: object }).uiExtra).not.toHaveProperty('moreSessionIds')
  })

  test('keeps a UI extra of another kind, and accounting without a link', async () => {
    const h = harness()
    echoing(h, 'noted')
    const noted = defineTool({
      name: 'noted',
      description: 'Runs a helper, shows a note',
      parameters: Type.Object({}),
      execute: async (_args, ctx) => {
        const outcome = await ctx.runSubAgent(spec, 'a')
        return { outputText: outcome.text, uiExtra: { type: 'markdown', markdown: '**ok**' } }
      },
    })
    const agent = h.createAgent({ tools: [noted] })
    await collect(agent.run('Go'))
    const [, , result] = await agent.history()
    expect(result).toMatchObject({ uiExtra: { type: 'markdown', markdown: '**ok**' } })
    expect(result).not.toHaveProperty('taskMetadata')
  })

  test.each(['keeps the result', 'replaces its text'] as const)(
    'afterToolCall sees the result with its links, as it is recorded; a hook that %s keeps them',
    async (what) => {
      const h = harness()
      echoing(h, 'trio')
      const trio = defineTool({
        name: 'trio',
        description: 'Runs two helpers at once',
        parameters: Type.Object({}),
        execute: async (_args, ctx) => {
          const outcomes = await Promise.all(['a', 'b'].map((input) => ctx.runSubAgent(spec, input)))
          return { outputText: outcomes.map((o) => o.text).join(' ') }
        },
      })
      const seen: unknown[] = []
      const agent = h.createAgent({
        tools: [trio],
        hooks: {
          afterToolCall: (call, result, ctx) => {
            // Only the parent's own call: the children's hooks see their own (none here).
            if (ctx.sessionId !== agent.sessionId) return undefined
            seen.push({ call: call.id, uiExtra: result.uiExtra, taskMetadata: result.taskMetadata })
            return what === 'replaces its text' ? { outputText: 'checked' } : undefined
          },
        },
      })
      const { events } = await collect(agent.run('Go'))
      const children = childrenOf(events)
      expect(children).toHaveLength(2)
      const links = { type: 'session', sessionId: children[0], moreSessionIds: [children[1]] }
      expect(seen).toEqual([
        { call: 'c1', uiExtra: links, taskMetadata: expect.objectContaining({ sessionId: children[0] }) },
      ])
      const [, , result] = await agent.history()
      expect(result).toMatchObject({
        outputText: what === 'replaces its text' ? 'checked' : 'a done. b done.',
        uiExtra: links,
      })
    },
  )

  /** Starts a helper and returns without waiting for it. */
  const fire = defineTool({
    name: 'fire',
    description: 'Starts a helper and returns at once',
    parameters: Type.Object({}),
    execute: (_args, ctx) => {
      void ctx.runSubAgent(spec, 'a')
      return 'started'
    },
  })

  test('a sub-agent it did not wait for: the result comes once it has ended, and links it', async () => {
    const h = harness()
    echoing(h, 'fire')
    const agent = h.createAgent({ tools: [fire] })
    const { events } = await collect(agent.run('Go'))
    expectOrdered(events)
    expectResultAfterChild(events, agent.sessionId, 'c1')
  })

  test('a sub-agent it did not wait for is interrupted with the task', async () => {
    const h = harness()
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You help.')
        return stalledChatStream({ id: 'r-late', steps: [say('Working')] })
      return chatStream({ id: 'r-parent-1', steps: [call('c1', 'fire', {})] })
    })
    const agent = h.createAgent({ tools: [fire] })
    const controller = new AbortController()
    agent.events.on('event', (event) => {
      if (event.sessionId !== agent.sessionId && event.type === 'assistant_text_delta') controller.abort()
    })
    const { events, outcome } = await collect(agent.run('Go', { signal: controller.signal }))
    expectOrdered(events)
    expect(outcome.reason).toBe('aborted')
    const child = events.find((e) => e.type === 'task_start' && e.subAgentState)!.sessionId
    expect(events.findLast((e) => e.type === 'task_finish' && e.sessionId === child)).toMatchObject({
      reason: 'aborted',
    })
    expectResultAfterChild(events, agent.sessionId, 'c1')
    expectValidHistory(await h.store.read(child))
  }, 10_000)
})

describe('a sub-agent started after its call ended', () => {
  const spec = { name: 'late', system: 'You help.' }

  /** The parent calls `tool` once, then answers; a child would answer at once. */
  function script(h: Harness, tool: string): void {
    h.server.handle((request) => {
      const messages = (request.body as { messages: Messages }).messages
      if (messages[0]?.content === 'You help.') return textReply('r-late', 'Late.')
      if (messages.at(-1)!.role === 'tool') return textReply('r-parent-2', 'Done.')
      return chatStream({ id: 'r-parent-1', steps: [call('c1', tool, {})] })
    })
  }

  /** What a late start did: its rejection (`undefined` if it resolved), read at once. */
  function refusal(start: () => Promise<unknown>): Promise<unknown> {
    return start().then(
      () => undefined,
      (error: unknown) => error,
    )
  }

  async function expectNothingRan(h: Harness, agent: { sessionId: string }, events: readonly Event[]) {
    expect(events.some((e) => e.type === 'task_start' && e.subAgentState)).toBe(false)
    expect((await h.store.list()).map((info) => info.id)).toEqual([agent.sessionId])
    expect(h.server.requests.some((r) => JSON.stringify(r.body).includes('You help.'))).toBe(false)
  }

  test.each(['while its task goes on', 'after its run ended'] as const)(
    'is refused with a tool_call_ended AgentError when the tool returned, %s, and nothing runs',
    async (when) => {
      const h = harness()
      script(h, 'linger')
      const opened = gate()
      let late: Promise<unknown> | undefined
      const linger = defineTool({
        name: 'linger',
        description: 'Returns, and starts a helper later',
        parameters: Type.Object({}),
        execute: (_args, ctx) => {
          late = opened.promise.then(() => refusal(() => ctx.runSubAgent(spec, 'late')))
          return 'returned'
        },
      })
      const agent = h.createAgent({ tools: [linger] })
      if (when === 'while its task goes on') {
        agent.events.on('event', (event) => {
          if (event.type === 'turn_start' && late !== undefined) opened.open()
        })
      }
      const { events, outcome } = await collect(agent.run('Go'))
      opened.open()
      const error = await late
      expect(AgentError.is(error) && error.code).toBe('tool_call_ended')
      expect(outcome.reason).toBe('completed')
      await expectNothingRan(h, agent, events)
    },
  )

  test('is refused the same way once the user interrupted the call', async () => {
    const h = harness()
    script(h, 'stubborn')
    let late: Promise<unknown> | undefined
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Starts a helper when interrupted',
      parameters: Type.Object({}),
      execute: (_args, ctx) =>
        new Promise<string>((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            late = refusal(() => ctx.runSubAgent(spec, 'late'))
            resolve('stopped')
          })
          ctx.progress('waiting')
        }),
    })
    const agent = h.createAgent({ tools: [stubborn] })
    const controller = new AbortController()
    agent.events.on('event', (event) => {
      if (event.type === 'tool_progress') controller.abort()
    })
    const { events, outcome } = await collect(agent.run('Go', { signal: controller.signal }))
    expect(outcome.reason).toBe('aborted')
    const error = await late
    expect(AgentError.is(error) && error.code).toBe('tool_call_ended')
    await expectNothingRan(h, agent, events)
  })
})
