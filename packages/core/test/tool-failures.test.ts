import { defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectValidHistory } from './helpers/history-checks.js'
import { summarizeHistory } from './helpers/summarize.js'

// Tools are the host's code, and the host's dependencies' code: they throw and return whatever
// they like. Whatever it is, the call ends with an `error` result the model reads, the task goes
// on, and the process never sees an unhandled rejection.

const harness = useHarness('file')

const rejections: unknown[] = []
const onRejection = (reason: unknown) => rejections.push(reason)
beforeEach(() => {
  rejections.length = 0
  process.on('unhandledRejection', onRejection)
})
afterEach(async () => {
  // Give a stray rejection a chance to surface before checking.
  await new Promise((resolve) => setTimeout(resolve, 10))
  process.off('unhandledRejection', onRejection)
  expect(rejections, 'unhandled rejections').toEqual([])
})

const throwing = (name: string, thrown: () => unknown): Tool =>
  defineTool({
    name,
    description: 'Throws',
    parameters: Type.Object({}),
    execute: async () => {
      throw thrown()
    },
  })

const returning = (name: string, value: () => unknown): Tool =>
  defineTool({
    name,
    description: 'Returns',
    parameters: Type.Object({}),
    execute: async () => value() as string,
  })

/** Runs one response calling every tool once, then `Finished.`; returns the history as persisted. */
async function runAll(tools: Tool[]) {
  const h = harness()
  const calls = tools.map((tool, i) => call(`c${i + 1}`, tool.name, {}))
  h.server.enqueue(chatStream({ id: 'r1', steps: calls }), textReply('r2', 'Finished.'))
  const agent = h.createAgent({ tools })
  const { outcome } = await collect(agent.run('go'))
  expect(outcome).toMatchObject({ reason: 'completed', text: 'Finished.' })
  // Read back by another store over the same files, as a restarted process would.
  const reopened = h.reopenStore()
  const history = await reopened.read(agent.sessionId)
  expectValidHistory(history)
  expect(history).toEqual(await agent.history())
  return summarizeHistory(history).filter((line) => line.startsWith('tool '))
}

describe('any thrown value becomes an error result', () => {
  test('odd thrown values: null prototype, throwing toString, throwing message getter, Symbol, undefined', async () => {
    const messageThrows = () => {
      const error = new Error('hidden')
      Object.defineProperty(error, 'message', {
        get() {
          throw new Error('message getter')
        },
      })
      return error
    }
    const lines = await runAll([
      throwing('null_proto', () => Object.create(null)),
      throwing('to_string', () => ({
        toString() {
          throw new Error('toString')
        },
      })),
      throwing('message_getter', messageThrows),
      throwing('symbol', () => Symbol('sym')),
      throwing('nothing', () => undefined),
      throwing('number', () => 42),
    ])
    expect(lines).toEqual([
      'tool c1 error: The tool threw an object without a prototype that cannot be shown as text.',
      'tool c2 error: The tool threw an object that cannot be shown as text.',
      'tool c3 error: The tool threw an object that cannot be shown as text.',
      'tool c4 error: Symbol(sym)',
      'tool c5 error: undefined',
      'tool c6 error: 42',
    ])
  })

  test('a plain object thrown reads as its message, or else as its code and status, never [object Object]', async () => {
    const lines = await runAll([
      throwing('plain_message', () => ({ message: 'not found', status: 404 })),
      throwing('plain_fields', () => ({ code: 'E_LIMIT', status: 429 })),
      throwing('huge', () => ({ code: 'x'.repeat(5000) })),
    ])
    expect(lines[0]).toBe('tool c1 error: not found')
    expect(lines[1]).toBe('tool c2 error: {"code":"E_LIMIT","status":429}')
    expect(lines[2]).toMatch(/^tool c3 error: \{"code":"x{100,}…"\}$/)
    expect(lines[2]!.length).toBeLessThan(300)
  })

  test("a plain object thrown without a message shows no other field's value, only its name", async () => {
    const token = 'Bearer sk-live-thrown-object-0123456789'
    const lines = await runAll([
      throwing('http', () => ({
        status: 401,
        headers: { authorization: token },
        config: { url: 'https://x.test' },
      })),
      throwing('fields', () => ({ code: 'E_LIMIT', retryAfter: 3, apiKey: token })),
      throwing('nothing_shown', () => ({ request: { headers: { authorization: token } } })),
    ])
    expect(lines).toEqual([
      'tool c1 error: {"status":401} (other fields not shown: headers, config)',
      'tool c2 error: {"code":"E_LIMIT"} (other fields not shown: retryAfter, apiKey)',
      'tool c3 error: an object (fields not shown: request)',
    ])
  })

  test('a formatToolError that throws falls back to the default text', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'broken', {})] }),
      textReply('r2', 'Finished.'),
    )
    const agent = h.createAgent({
      tools: [throwing('broken', () => new Error('disk on fire'))],
      formatToolError: () => {
        throw Object.create(null)
      },
    })
    const { outcome } = await collect(agent.run('go'))
    expect(outcome).toMatchObject({ reason: 'completed' })
    expect(summarizeHistory(await agent.history())).toContain('tool c1 error: disk on fire')
  })

  test('a returned object whose getter throws is an error result', async () => {
    const lines = await runAll([
      returning('getter', () => ({
        get outputText() {
          throw new Error('getter')
        },
      })),
    ])
    expect(lines).toEqual(['tool c1 error: Tool "getter" returned an object that could not be read.'])
  })

  test('a returned object whose getters answer differently each time is read once: the task goes on', async () => {
    const changing = <T, U>(first: T, later: U) => {
      let reads = 0
      return () => (reads++ === 0 ? first : later)
    }
    const text = changing('first read', 42)
    const parts = changing([], 'not a list')
    const lines = await runAll([
      returning('fickle', () => ({
        get outputText() {
          return text()
        },
        get parts() {
          return parts()
        },
      })),
    ])
    expect(lines).toEqual(['tool c1 success: first read'])
  })
})

describe('a result the history cannot hold becomes an error result; its siblings are persisted', () => {
  test('cyclic uiExtra and a BigInt, between two good results', async () => {
    const cyclic = () => {
      const value: Record<string, unknown> = { name: 'loop' }
      value.self = value
      return { outputText: 'made a loop', uiExtra: { type: 'json', value } }
    }
    const lines = await runAll([
      returning('first', () => 'one'),
      returning('cyclic', cyclic),
      returning('bigint', () => ({ outputText: 'big', uiExtra: { type: 'json', value: 10n } })),
      returning('last', () => ({ outputText: 'two', uiExtra: { type: 'markdown', markdown: '**ok**' } })),
    ])
    expect(lines[0]).toBe('tool c1 success: one')
    expect(lines[1]).toMatch(/^tool c2 error: Tool "cyclic" returned an invalid result: .*circular/i)
    expect(lines[2]).toMatch(/^tool c3 error: Tool "bigint" returned an invalid result: .*BigInt/)
    expect(lines[3]).toBe('tool c4 success: two')
  })

  test('a uiExtra whose toJSON turns into something invalid is refused, not written', async () => {
    const lines = await runAll([
      returning('sneaky', () => ({
        outputText: 'fine',
        uiExtra: { type: 'markdown', markdown: 'ok', toJSON: () => ({ type: 'markdown', markdown: 5 }) },
      })),
    ])
    expect(lines).toEqual([
      'tool c1 error: Tool "sneaky" returned an invalid result: at /uiExtra/markdown: expected a string (got 5)',
    ])
  })
})

describe('a validate that throws or returns no decision refuses the call; the task goes on', () => {
  // As docs/tools.md shows it: it reads `args.n`, and throws when the model sends `null`.
  const plain = (name: string, needsApproval: boolean, validate: (args: unknown) => unknown): Tool =>
    defineTool({
      name,
      description: 'Checks its own arguments',
      parameters: Type.Unsafe<{ n: number }>({ type: 'object', properties: { n: { type: 'number' } } }),
      needsApproval: needsApproval ? () => true : false,
      validate: validate as never,
      execute: ({ n }) => String(n),
    })
  const readsN = (args: unknown) =>
    typeof (args as { n?: unknown }).n === 'number'
      ? { ok: true, args }
      : { ok: false, error: '/n: must be number' }

  test.each([false, true])('with needsApproval %s', async (needsApproval) => {
    const h = harness()
    h.server.enqueue(
      chatStream({
        id: 'r1',
        steps: [
          call('c1', 'reads_n', 'null'),
          call('c2', 'no_decision', {}),
          call('c3', 'checked', { n: 1 }),
        ],
      }),
      textReply('r2', 'Finished.'),
    )
    const agent = h.createAgent({
      tools: [
        plain('reads_n', needsApproval, readsN),
        plain('no_decision', needsApproval, () => undefined),
        plain('checked', false, readsN),
      ],
    })
    const { outcome } = await collect(agent.run('go'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Finished.' })
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history).filter((line) => line.startsWith('tool '))).toEqual([
      `tool c1 error: Invalid arguments for tool "reads_n": the arguments could not be checked (Cannot read properties of null (reading 'n'))`,
      'tool c2 error: Invalid arguments for tool "no_decision": the arguments could not be checked',
      'tool c3 success: 1',
    ])
  })
})

test('progress reported with a value that is not text is shown as text, and the task goes on', async () => {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'reports', {})] }), textReply('r2', 'Finished.'))
  const reports = defineTool({
    name: 'reports',
    description: 'Reports progress',
    parameters: Type.Object({}),
    execute: (_args, ctx) => {
      ctx.progress(42 as never)
      ctx.progress(Object.create(null) as never)
      ctx.progress(undefined as never)
      return 'done'
    },
  })
  const agent = h.createAgent({ tools: [reports] })
  const { events, outcome } = await collect(agent.run('go'))
  expect(outcome).toMatchObject({ reason: 'completed', text: 'Finished.' })
  const messages = events.flatMap((e) => (e.type === 'tool_progress' ? [e.message] : []))
  expect(messages).toEqual(['42', 'undefined'])
  const history = await agent.history()
  expectValidHistory(history)
  expect(summarizeHistory(history).filter((line) => line.startsWith('tool '))).toEqual([
    'tool c1 success: done',
  ])
})

test('a result that is not well-formed text (a lone surrogate) reaches the model and the history with U+FFFD in its place', async () => {
  // A tool that cuts a string in the middle of an emoji leaves half of it: no UTF-8 form, and
  // strict JSON parsers (Anthropic's among them) refuse the request carrying it, every request of
  // the session from then on.
  const h = harness()
  h.server.enqueue(
    chatStream({ id: 'r1', steps: [call('c1', 'cuts', {}), call('c2', 'throws_cut', {})] }),
    textReply('r2', 'Finished.'),
  )
  const agent = h.createAgent({
    tools: [
      returning('cuts', () => 'smile \ud83d'),
      throwing('throws_cut', () => new Error('bad \udca9 end')),
    ],
  })
  const { events, outcome } = await collect(agent.run('go'))
  expect(outcome).toMatchObject({ reason: 'completed', text: 'Finished.' })
  const results = events.flatMap((e) => (e.type === 'tool_result' ? [e.result] : []))
  expect(results).toEqual(['smile \ufffd', 'bad \ufffd end'])
  const history = await agent.history()
  expect(summarizeHistory(history).filter((line) => line.startsWith('tool '))).toEqual([
    'tool c1 success: smile \ufffd',
    'tool c2 error: bad \ufffd end',
  ])
  const sent = h.server.requests[1]!.rawBody
  expect(sent).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/i)
  expect(sent).toContain('smile \ufffd')
})
