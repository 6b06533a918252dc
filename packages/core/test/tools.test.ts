import { defineTool, type Tool } from '@kode/core'
import { INCOMPLETE_CALL_TEXT } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say, textReply } from './helpers/chat-wire.js'
import { collect, delay, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

/** Runs one response with `calls`, then a plain answer; returns the events' summary lines for tools. */
async function runCalls(tools: Tool[], calls: ReturnType<typeof call>[], options = {}) {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: calls }), textReply('r2', 'Finished.'))
  const agent = h.createAgent({ tools, ...options })
  const { events, outcome } = await collect(agent.run('go'))
  expectOrdered(events)
  const history = await agent.history()
  expectValidHistory(history)
  const lines = summarize(events).filter((l) => /^(tool_call |tool_progress|tool_result|todo_change)/.test(l))
  return { events, outcome, history, lines, h }
}

describe('tool calls of one response', () => {
  test('run concurrently, and results are persisted and emitted in call order when they finish out of order', async () => {
    const finished: string[] = []
    const work = defineTool({
      name: 'work',
      description: 'Works for a while',
      parameters: Type.Object({ name: Type.String(), ms: Type.Number() }),
      execute: async ({ name, ms }) => {
        await delay(ms)
        finished.push(name)
        return `${name} done`
      },
    })
    const { lines, history, outcome } = await runCalls(
      [work],
      [call('c1', 'work', { name: 'slow', ms: 40 }), call('c2', 'work', { name: 'fast', ms: 0 })],
    )
    expect(finished).toEqual(['fast', 'slow'])
    expect(lines).toEqual([
      'tool_call c1 work {"name":"slow","ms":40}',
      'tool_call c2 work {"name":"fast","ms":0}',
      'tool_result c1 success: slow done',
      'tool_result c2 success (last): fast done',
    ])
    expect(summarizeHistory(history).slice(1, 4)).toEqual([
      'assistant tool_use: call c1 work {"name":"slow","ms":40} | call c2 work {"name":"fast","ms":0}',
      'tool c1 success: slow done',
      'tool c2 success: fast done',
    ])
    expect(outcome.reason).toBe('completed')
  })

  test('toolConcurrency bounds how many run at once', async () => {
    let running = 0
    let most = 0
    const work = defineTool({
      name: 'work',
      description: 'Works',
      parameters: Type.Object({}),
      execute: async () => {
        most = Math.max(most, ++running)
        await delay(5)
        running--
        return 'ok'
      },
    })
    const calls = [1, 2, 3, 4, 5].map((i) => call(`c${i}`, 'work', {}))
    const { lines } = await runCalls([work], calls, { toolConcurrency: 2 })
    expect(most).toBe(2)
    expect(lines.filter((l) => l.startsWith('tool_result')).map((l) => l.split(' ')[1])).toEqual([
      'c1',
      'c2',
      'c3',
      'c4',
      'c5',
    ])
  })

  test('a tool with concurrent: false waits for the running calls and runs alone', async () => {
    const log: string[] = []
    const tool = (name: string, concurrent: boolean) =>
      defineTool({
        name,
        description: name,
        parameters: Type.Object({}),
        concurrent,
        execute: async () => {
          log.push(`start ${name}`)
          await delay(5)
          log.push(`end ${name}`)
          return name
        },
      })
    await runCalls(
      [tool('a', true), tool('alone', false), tool('b', true)],
      [call('c1', 'a', {}), call('c2', 'alone', {}), call('c3', 'b', {})],
    )
    expect(log).toEqual(['start a', 'end a', 'start alone', 'end alone', 'start b', 'end b'])
  })
})

describe('tool failures are error results the model sees, and the loop goes on', () => {
  test('an unknown tool lists the available ones', async () => {
    const { lines, outcome, h } = await runCalls([readFile], [call('c1', 'nope', {})])
    expect(lines).toEqual([
      'tool_call c1 nope {}',
      'tool_result c1 error (last): Unknown tool "nope". Available tools: read_file.',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Finished.' })
    expect(h.server.requests).toHaveLength(2)
  })

  test('malformed JSON arguments in a finished response are never executed; the result says the JSON is invalid', async () => {
    let ran = false
    const tool = defineTool({
      name: 'read_file',
      description: 'Reads',
      parameters: Type.Object({ path: Type.String() }),
      execute: () => {
        ran = true
        return ''
      },
    })
    const { lines, history } = await runCalls([tool], [call('c1', 'read_file', '{"path": nope}')])
    expect(ran).toBe(false)
    const parseError = (() => {
      try {
        JSON.parse('{"path": nope}')
      } catch (error) {
        return (error as Error).message
      }
    })()
    const text = `Invalid arguments for tool "read_file": the arguments are not valid JSON (${parseError})`
    expect(lines).toEqual(['tool_call c1 read_file {"path": nope}', `tool_result c1 error (last): ${text}`])
    // Not cut off: the call closed in a response that finished normally.
    expect(summarizeHistory(history).slice(1, 3)).toEqual([
      'assistant tool_use: call c1 read_file {"path": nope}',
      `tool c1 error: ${text}`,
    ])
  })

  test('arguments that do not match the schema name the path and the problem', async () => {
    const { lines } = await runCalls([readFile], [call('c1', 'read_file', { path: 5 })])
    expect(lines[1]).toBe(
      'tool_result c1 error (last): Invalid arguments for tool "read_file": /path: Expected string',
    )
  })

  test('a tool that throws gives the error message, not a stack', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'Fails',
      parameters: Type.Object({}),
      execute: () => {
        throw new Error('disk on fire')
      },
    })
    const { lines, history } = await runCalls([broken], [call('c1', 'broken', {})])
    expect(lines[1]).toBe('tool_result c1 error (last): disk on fire')
    expect(summarizeHistory(history)[2]).toBe('tool c1 error: disk on fire')
  })

  test('formatToolError decides the text of a thrown error', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'Fails',
      parameters: Type.Object({}),
      execute: async () => Promise.reject(new RangeError('too far')),
    })
    const { lines } = await runCalls([broken], [call('c1', 'broken', {})], {
      formatToolError: (error: unknown, c: { name: string }) => `${c.name}: ${(error as Error).name}`,
    })
    expect(lines[1]).toBe('tool_result c1 error (last): broken: RangeError')
  })

  test('a call that outlives its timeout is an error, and its signal aborts', async () => {
    let signal: AbortSignal | undefined
    const hang = defineTool({
      name: 'hang',
      description: 'Never returns',
      parameters: Type.Object({}),
      timeoutMs: 20,
      execute: (_args, ctx) => {
        signal = ctx.signal
        return new Promise<string>(() => {})
      },
    })
    const { lines, outcome } = await runCalls([hang], [call('c1', 'hang', {})])
    expect(lines[1]).toBe('tool_result c1 error (last): Tool "hang" timed out after 20 ms.')
    expect(signal?.aborted).toBe(true)
    expect((signal!.reason as DOMException).name).toBe('TimeoutError')
    expect(outcome.reason).toBe('completed')
  })

  test('the agent-wide toolTimeoutMs applies to tools without their own', async () => {
    const hang = defineTool({
      name: 'hang',
      description: 'Never returns',
      parameters: Type.Object({}),
      execute: () => new Promise<string>(() => {}),
    })
    const { lines } = await runCalls([hang], [call('c1', 'hang', {})], { toolTimeoutMs: 15 })
    expect(lines[1]).toBe('tool_result c1 error (last): Tool "hang" timed out after 15 ms.')
  })

  test('a call whose arguments were cut off is never executed', async () => {
    let ran = false
    const tool = defineTool({
      name: 'read_file',
      description: 'Reads',
      parameters: Type.Object({ path: Type.String() }),
      execute: () => {
        ran = true
        return ''
      },
    })
    const h = harness()
    h.server.enqueue(
      chatStream({
        id: 'r1',
        steps: [say('Reading.'), call('c1', 'read_file', '{"path": "a.t')],
        finish: 'length',
      }),
      textReply('r2', 'Sorry.'),
    )
    const agent = h.createAgent({ tools: [tool] })
    const { events } = await collect(agent.run('go'))
    expectOrdered(events)
    expect(ran).toBe(false)
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history).slice(1, 3)).toEqual([
      'assistant length: text "Reading." | call c1 read_file {"path": "a.t (incomplete)',
      `tool c1 error: ${INCOMPLETE_CALL_TEXT}`,
    ])
  })

  test('a result the history cannot hold (a text part) becomes an error result', async () => {
    const bad = defineTool({
      name: 'bad',
      description: 'Returns a text part',
      parameters: Type.Object({}),
      // biome-ignore lint/suspicious/noExplicitAny: deliberately wrong output
      execute: () => ({ outputText: 'x', parts: [{ type: 'text', text: 'no' } as any] }),
    })
    const { lines } = await runCalls([bad], [call('c1', 'bad', {})])
    expect(lines[1]).toMatch(
      /^tool_result c1 error \(last\): Tool "bad" returned an invalid result: at \/parts\/0/,
    )
  })
})

describe('tool results', () => {
  test('long output keeps its head and tail within toolOutputLimit', async () => {
    const loud = defineTool({
      name: 'loud',
      description: 'Prints a lot',
      parameters: Type.Object({}),
      execute: () => `HEAD${'x'.repeat(5_000)}TAIL`,
    })
    const { history } = await runCalls([loud], [call('c1', 'loud', {})], { toolOutputLimit: 300 })
    const result = history[2] as { outputText: string }
    expect(result.outputText.length).toBeLessThanOrEqual(300)
    expect(result.outputText.startsWith('HEADxxx')).toBe(true)
    expect(result.outputText.endsWith('xxxTAIL')).toBe(true)
    expect(result.outputText).toMatch(/\[… \d+ characters cut from the middle of this output …\]/)
  })

  test('a structured result keeps images, UI extra and metadata; a todo side effect emits todo_change after it', async () => {
    const todos = [
      { content: 'write tests', status: 'completed' as const },
      { content: 'ship', status: 'in_progress' as const },
    ]
    const plan = defineTool({
      name: 'plan',
      description: 'Updates the todo list',
      parameters: Type.Object({}),
      execute: () => ({
        outputText: 'Todo list updated.',
        parts: [{ type: 'image_url', url: 'data:image/png;base64,AAAA' }],
        uiExtra: { type: 'todo_list', todos },
        sideEffects: ['todo_change'],
      }),
    })
    const { lines, history, events } = await runCalls([plan], [call('c1', 'plan', {})])
    expect(lines).toEqual([
      'tool_call c1 plan {}',
      'tool_result c1 success (last): Todo list updated.',
      'todo_change write tests=completed, ship=in_progress',
    ])
    expect(history[2]).toMatchObject({
      status: 'success',
      parts: [{ type: 'image_url', url: 'data:image/png;base64,AAAA' }],
      uiExtra: { type: 'todo_list', todos },
      sideEffects: ['todo_change'],
    })
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({
      uiExtra: { type: 'todo_list', todos },
    })
  })

  test('status error in a structured result is an error result with its text', async () => {
    const soft = defineTool({
      name: 'soft',
      description: 'Fails softly',
      parameters: Type.Object({}),
      execute: () => ({ outputText: 'not found', status: 'error' }),
    })
    const { lines } = await runCalls([soft], [call('c1', 'soft', {})])
    expect(lines[1]).toBe('tool_result c1 error (last): not found')
  })

  test('progress reaches the host as tool_progress between the call and its result', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Reports progress',
      parameters: Type.Object({}),
      execute: async (_args, ctx) => {
        ctx.progress('halfway')
        await delay(1)
        ctx.progress('almost')
        return 'done'
      },
    })
    const { lines } = await runCalls([slow], [call('c1', 'slow', {})])
    expect(lines).toEqual([
      'tool_call c1 slow {}',
      'tool_progress c1: halfway',
      'tool_progress c1: almost',
      'tool_result c1 success (last): done',
    ])
  })

  test('the context names the call, the session and the response', async () => {
    const seen: unknown[] = []
    const probe = defineTool({
      name: 'probe',
      description: 'Looks at its context',
      parameters: Type.Object({}),
      execute: (_args, ctx) => {
        seen.push({
          id: ctx.toolCallId,
          name: ctx.toolName,
          session: ctx.sessionId,
          response: ctx.responseId,
        })
        return ''
      },
    })
    await runCalls([probe], [call('c1', 'probe', {})])
    expect(seen).toEqual([{ id: 'c1', name: 'probe', session: 'id1', response: 'r1' }])
  })
})
