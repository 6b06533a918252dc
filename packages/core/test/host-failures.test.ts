import { AgentError, createAgent, defineSubAgent, defineTool, pendingApprovals } from '@kode/core'
import { type Event, isInterrupt } from '@kode/protocol'
import type { LLMClient } from '@kode/providers'
import { createMemorySessionStore, deriveReplayEvents, type SessionStore } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say, stalledChatStream, textReply } from './helpers/chat-wire.js'
import { collect, gate, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { withAppends } from './helpers/recording-store.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

/**
 * A store whose appends fail from the `failFrom`-th on (1-based), throwing what `failure` makes
 * (by default an `Error`, as a full disk would).
 */
function failingStore(failFrom: number, failure: () => unknown = () => new Error('disk full')): SessionStore {
  let appends = 0
  return withAppends(createMemorySessionStore(), async (events, next) => {
    if (++appends >= failFrom) throw failure()
    return next(events)
  })
}

/** Drains a run, returning its events and what its iterator threw. */
async function drain(run: AsyncIterable<Event>): Promise<{ events: Event[]; thrown: unknown }> {
  const events: Event[] = []
  try {
    for await (const event of run) events.push(event)
  } catch (error) {
    return { events, thrown: error }
  }
  return { events, thrown: undefined }
}

describe('failures the host must handle are thrown, after a well-formed event sequence', () => {
  test('a store write failure ends the sequence with error and task_finish, then the iterator throws it', async () => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }))
    // Appends: user message, assistant message, then the tool result fails.
    const agent = h.createAgent({ store: failingStore(3), tools: [readFile] })
    const run = agent.run('go')
    const { events, thrown } = await drain(run)
    expect((thrown as Error).message).toBe('disk full')
    await expect(run.done).rejects.toThrow('disk full')
    expectOrdered(events)
    expect(summarize(events).slice(-6)).toEqual([
      'context_usage 120/128000',
      'tool_call c1 read_file {"path":"a"}',
      'tool_result c1 error: The task failed before this tool call finished: disk full',
      'error: disk full',
      'turn_end',
      'task_finish error: ',
    ])
    expect(agent.running).toBe(false)
  })

  test.each([
    [
      'mid-stream',
      'adapter bug',
      (error: Error): LLMClient['stream'] =>
        () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }) }),
    ],
    [
      'at once',
      'no stream for you',
      (error: Error): LLMClient['stream'] =>
        () => {
          throw error
        },
    ],
  ])(
    'a custom client that throws something other than a ProviderError (%s) fails the run, its record kept',
    async (_, text, stream) => {
      const h = harness()
      const error = new TypeError(text)
      const broken: LLMClient = {
        api: 'broken',
        provider: 'broken',
        model: 'm',
        modelInfo: undefined,
        stream: stream(error),
        complete: () => Promise.reject(error),
      }
      const agent = createAgent({ client: broken, store: h.store })
      const run = agent.run('go')
      const { events, thrown } = await drain(run)
      expect(thrown).toBe(error)
      await expect(run.done).rejects.toBe(error)
      expectOrdered(events)
      expect(summarize(events).slice(-4)).toEqual([
        `error: The model client threw: ${text}`,
        'turn_end',
        'task_metadata turns=1 subAgents=0',
        'task_finish error: ',
      ])
      // Kept as a throwing hook's failure is: the session says how its task ended.
      const history = await agent.history()
      expectValidHistory(history)
      expect(summarizeHistory(history)).toEqual([
        'user: go',
        `error: The model client threw: ${text}`,
        'task_metadata turns=1 subAgents=0',
      ])
      expect(agent.running).toBe(false)
    },
  )

  test('a listener that throws stops the task as a failure, not an interrupt, then the run fails with its error', async () => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }))
    const agent = h.createAgent({ tools: [readFile] })
    agent.events.on('tool_call', () => {
      throw new Error('listener bug')
    })
    const run = agent.run('go')
    const { events, thrown } = await drain(run)
    expect((thrown as Error).message).toBe('listener bug')
    await expect(run.done).rejects.toThrow('listener bug')
    expectOrdered(events)
    const failure = 'An event listener threw: listener bug'
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: go',
      'turn_start',
      'tool_call_start c1 read_file',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 read_file {"path":"a"}',
      `tool_result c1 error (last): The task failed before this tool call ran: ${failure}`,
      `error: ${failure}`,
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish error: ',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: go',
      'assistant tool_use: call c1 read_file {"path":"a"}',
      `tool c1 error: The task failed before this tool call ran: ${failure}`,
      `error: ${failure}`,
      'task_metadata turns=1 subAgents=0',
    ])
    expect(agent.running).toBe(false)
  })

  test('a listener that throws while a response streams keeps its text as an error message, not an aborted one', async () => {
    const h = harness()
    h.server.enqueue(stalledChatStream({ id: 'r1', steps: [say('Drafting')] }))
    const agent = h.createAgent()
    agent.events.on('assistant_text_delta', () => {
      throw new Error('render failed')
    })
    const run = agent.run('go')
    const { events, thrown } = await drain(run)
    expect((thrown as Error).message).toBe('render failed')
    expectOrdered(events)
    const failure = 'An event listener threw: render failed'
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: go',
      'turn_start',
      'assistant_text_start',
      'text: Drafting',
      'assistant_text_end',
      `error: ${failure}`,
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish error: Drafting',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: go',
      'assistant error: text "Drafting"',
      `error: ${failure}`,
      'task_metadata turns=1 subAgents=0',
    ])
    expect(history[1]).toMatchObject({ errorMessage: failure })
    expect(history[1]).not.toHaveProperty('isApiError')
  })
  test('a listener that throws on a sub-agent event fails the child and the parent, neither as aborted', async () => {
    const h = harness()
    const researcher = defineSubAgent({
      name: 'researcher',
      description: 'Researches',
      system: 'You research.',
      tools: [readFile],
    })
    h.server.handle((request) => {
      const messages = (request.body as { messages: { content?: unknown }[] }).messages
      if (messages[0]?.content === 'You research.')
        return chatStream({ id: 'r-child', steps: [call('l1', 'read_file', { path: 'cats' })] })
      return chatStream({ id: 'r-parent', steps: [call('c1', 'researcher', { prompt: 'cats' })] })
    })
    const agent = h.createAgent({ tools: [researcher] })
    agent.events.on('tool_call', (event) => {
      if (event.sessionId !== agent.sessionId) throw new Error('listener bug')
    })
    const { events, thrown } = await drain(agent.run('Research cats'))
    expect((thrown as Error).message).toBe('listener bug')
    expectOrdered(events)
    const failure = 'An event listener threw: listener bug'
    // The child's call never ran (the listener threw as it started); the parent's was running it.
    const failed = `The task failed before this tool call ran: ${failure}`
    const parentFailed = `The task failed before this tool call finished: ${failure}`
    const child = events.find((e) => e.sessionId !== agent.sessionId)!.sessionId
    expect(
      summarize(
        events.filter((e) => e.sessionId === child),
        child,
      ),
    ).toEqual([
      'task_start sub-agent researcher',
      'user_message: cats',
      'turn_start',
      'tool_call_start l1 read_file',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call l1 read_file {"path":"cats"}',
      `tool_result l1 error (last): ${failed}`,
      'error: An event listener threw: listener bug',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish error: ',
    ])
    expect(summarize(events.filter((e) => e.sessionId === agent.sessionId))).toEqual([
      'task_start',
      'user_message: Research cats',
      'turn_start',
      'tool_call_start c1 researcher',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 researcher {"prompt":"cats"}',
      `tool_result c1 error (last): ${parentFailed}`,
      'error: An event listener threw: listener bug',
      'turn_end',
      'task_metadata turns=1 subAgents=1',
      'task_finish error: ',
    ])
    for (const id of [agent.sessionId, child]) {
      const history = await h.store.read(id)
      expectValidHistory(history)
      expect(history.some(isInterrupt)).toBe(false)
    }
  })
})

describe("a failure once the turn's last result is out, while a later call waits for approval", () => {
  test('the task ends error with the call still waiting, live as in replay; continue decides it', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({
        id: 'r1',
        steps: [call('c1', 'read_file', { path: 'a' }), call('c2', 'write_file', { path: 'a' })],
      }),
      textReply('r2', 'Done.'),
    )
    const writeFile = defineTool({
      name: 'write_file',
      description: 'Writes a file',
      parameters: Type.Object({ path: Type.String() }),
      needsApproval: true,
      execute: ({ path }) => `wrote ${path}`,
    })
    const agent = h.createAgent({ tools: [readFile, writeFile] })
    let fail = true
    agent.events.on('tool_result', () => {
      if (!fail) return
      fail = false
      throw new Error('listener broke')
    })
    const { events, thrown } = await drain(agent.run('Read a, write a'))
    expect(thrown).toMatchObject({ message: 'listener broke' })
    // c1's result was the turn's last (c2 waits): the failure answers nothing more, as one a
    // moment later would not, so replay marks the same one result last.
    const results = (list: readonly Event[]) => summarize(list.filter((e) => e.type === 'tool_result'))
    expect(results(events)).toEqual(['tool_result c1 success (last): contents of a'])
    const history = await agent.history()
    expect(results(deriveReplayEvents(history, { sessionId: agent.sessionId }))).toEqual(results(events))
    expect(summarizeHistory(history).slice(2)).toEqual([
      'approval_request c2 write_file {"path":"a"}',
      'tool c1 success: contents of a',
      'error: An event listener threw: listener broke',
      'task_metadata turns=1 subAgents=0',
    ])
    // The call is still the user's to decide.
    expect(pendingApprovals(history).map((pending) => pending.toolCallId)).toEqual(['c2'])
    const next = await collect(agent.continue({ approvals: [{ toolCallId: 'c2', approved: true }] }))
    expect(next.outcome).toMatchObject({ reason: 'completed', text: 'Done.' })
    expectValidHistory(await agent.history())
  })
})

describe('the iterator always settles', () => {
  test('return() while a next() is pending ends that next() too, and the task is interrupted cleanly', async () => {
    const h = harness()
    const started = gate()
    const hang = defineTool({
      name: 'hang',
      description: 'Runs until interrupted',
      parameters: Type.Object({}),
      execute: () => {
        started.open()
        return new Promise<string>(() => {})
      },
    })
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'hang', {})] }))
    const agent = h.createAgent({ tools: [hang] })
    const run = agent.run('go')
    await started.promise
    const iterator = run[Symbol.asyncIterator]()
    // Take what is buffered, up to the call: nothing more comes while the tool hangs.
    for (let r = await iterator.next(); !r.done && r.value.type !== 'tool_call'; r = await iterator.next()) {}
    const pending = iterator.next()
    const returned = iterator.return!()
    expect(await pending).toEqual({ done: true, value: undefined })
    expect(await returned).toEqual({ done: true, value: undefined })
    expect((await run.done).reason).toBe('aborted')
    expect(agent.running).toBe(false)
    expectValidHistory(await agent.history())
  })
})

describe('misuse is refused at the call', () => {
  test('a missing client or store, or tools not made by defineTool, are invalid_options at createAgent', () => {
    // What plain JavaScript (or a cast) lets through; each once failed later as a bare TypeError.
    const client = { stream: () => undefined } as unknown as LLMClient
    const store = createMemorySessionStore()
    const tool = defineTool({ name: 'ok', description: '', parameters: Type.Object({}), execute: () => '' })
    const cases: [unknown, string][] = [
      [{ store }, 'createAgent needs a client: one from createClient of @kode/providers'],
      [{ client: {}, store }, 'createAgent needs a client: one from createClient of @kode/providers'],
      [
        { client },
        'createAgent needs a store: createMemorySessionStore() or createFileSessionStore({ dir }) of @kode/session',
      ],
      [{ client, store, tools: tool }, 'tools must be an array of tools made with defineTool'],
      [
        { client, store, tools: [tool, { name: 'raw', description: '', parameters: {}, execute: () => '' }] },
        'tools[1] (raw) was not made with defineTool; wrap it in defineTool({ ... })',
      ],
    ]
    for (const [options, message] of cases) {
      const error = (() => {
        try {
          createAgent(options as Parameters<typeof createAgent>[0])
        } catch (e) {
          return e
        }
      })()
      expect(AgentError.is(error) && [error.code, error.message]).toEqual(['invalid_options', message])
    }
  })

  test('iterating a run a second time is an already_iterated AgentError; the first iteration gets every event', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hi'))
    const agent = h.createAgent()
    const run = agent.run('go')
    const first = run[Symbol.asyncIterator]()
    const error = (() => {
      try {
        run[Symbol.asyncIterator]()
      } catch (e) {
        return e
      }
    })()
    expect(AgentError.is(error) && [error.code, error.message]).toEqual([
      'already_iterated',
      `the run of session ${agent.sessionId} is already being iterated: iterate a run once, and listen on agent.events for a second consumer`,
    ])
    const events: Event[] = []
    for (let r = await first.next(); !r.done; r = await first.next()) events.push(r.value)
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: go',
      'turn_start',
      'assistant_text_start',
      'text: Hi',
      'assistant_text_end',
      'response_complete: Hi',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Hi',
    ])
  })

  test('run while a task runs is an agent_busy AgentError', async () => {
    const h = harness()
    const hold = gate()
    const wait = defineTool({
      name: 'wait',
      description: 'Waits',
      parameters: Type.Object({}),
      execute: async () => {
        await hold.promise
        return 'ok'
      },
    })
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'wait', {})] }), textReply('r2', 'done'))
    const agent = h.createAgent({ tools: [wait] })
    const first = agent.run('one')
    const error = (() => {
      try {
        agent.run('two')
      } catch (e) {
        return e
      }
    })()
    // The message says how to wait for the task, or how to hand it the input instead.
    expect(AgentError.is(error) && [error.code, error.message]).toEqual([
      'agent_busy',
      `a task is already running in session ${agent.sessionId}: iterate its run to the end or await run.done before starting another, or pass the input to agent.steer to add it to the running task`,
    ])
    hold.open()
    await collect(first)
    expect(agent.running).toBe(false)
  })

  test('input the history cannot hold is a CodecError, before anything runs', async () => {
    const h = harness()
    const agent = h.createAgent()
    expect(() => agent.run([{ type: 'image_url', url: 'ftp://nope' }])).toThrow(/at \/parts\/0\/url/)
    expect(() => agent.steer([{ type: 'image_file', path: '', mimeType: 'image/png' }])).toThrow(
      /at \/parts\/0\/path/,
    )
    // What is checked is what would be written: a part whose toJSON turns invalid, or a cycle.
    const sneaky = { type: 'text' as const, text: 'fine', toJSON: () => ({ type: 'text', text: 1 }) }
    expect(() => agent.run([sneaky])).toThrow(/at \/parts\/0\/text/)
    const cyclic: Record<string, unknown> = { type: 'text', text: 'loop' }
    cyclic.self = cyclic
    expect(() => agent.run([cyclic as never])).toThrow(/a value JSON can represent/)
    expect(agent.running).toBe(false)
    expect(await agent.history()).toEqual([])
    expect(h.server.requests).toHaveLength(0)
  })

  test('unusable options and duplicate tool names are invalid_options AgentErrors', () => {
    const h = harness()
    for (const options of [
      { maxTurns: 0 },
      { toolConcurrency: 1.5 },
      { toolOutputLimit: -1 },
      { tools: [readFile, readFile] },
    ]) {
      const error = (() => {
        try {
          h.createAgent(options)
        } catch (e) {
          return e
        }
      })()
      expect(AgentError.is(error) && error.code, JSON.stringify(options)).toBe('invalid_options')
    }
  })
})

describe('a store that fails with a value that cannot be shown as text', () => {
  const throwingMessage = () => {
    const error = new Error('x')
    Object.defineProperty(error, 'message', {
      get() {
        throw new Error('no message')
      },
    })
    return error
  }
  test.each([
    ['an object without a prototype', () => Object.create(null) as unknown],
    ['an Error whose message getter throws', throwingMessage],
  ])('%s still ends the run, after a well-formed sequence', async (_, thrown) => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hi.'))
    const failure = thrown()
    const agent = h.createAgent({ store: failingStore(1, () => failure) })
    const run = agent.run('go')
    const ended = drain(run)
    const result = await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 2000, 'hung'))])
    expect(result).not.toBe('hung')
    const { events, thrown: error } = await ended
    expect(error).toBe(failure)
    await expect(run.done).rejects.toBe(failure)
    expectOrdered(events)
    expect(summarize(events).at(-1)).toBe('task_finish error: ')
    expect(agent.running).toBe(false)
  })
})

describe('a store that fails with a value other than an Error', () => {
  // The same rule as a tool's failure: a plain object reads as its message or its JSON, an
  // Error without a message as its name; never `[object Object]` or nothing.
  test.each([
    ['a plain object with a message', () => ({ message: 'quota exceeded', status: 507 }), 'quota exceeded'],
    ['a plain object without one', () => ({ code: 'ENOSPC' }), '{"code":"ENOSPC"}'],
    ['an Error without a message', () => new RangeError(''), 'RangeError'],
  ])('%s: the error event reads as its text', async (_, thrown, text) => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hi.'))
    const agent = h.createAgent({ store: failingStore(1, thrown) })
    const { events } = await drain(agent.run('go'))
    expectOrdered(events)
    expect(events.filter((e) => e.type === 'error')).toMatchObject([{ errorMessage: text }])
  })
})
