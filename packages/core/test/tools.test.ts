import { defineTool, type Tool } from '@kode/core'
import { INCOMPLETE_CALL_TEXT } from '@kode/protocol/helpers'
import { createMemorySessionStore, deriveReplayEvents } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say, textReply } from './helpers/chat-wire.js'
import { collect, delay, gate, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { replayedPart, replayOf } from './helpers/replayed.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

/**
 * Runs `Go` with `tool` to a completed end, checking its events' order and its history: the agent
 * and its history, summarized.
 */
async function runToTheEnd(h: ReturnType<typeof harness>, tool: Tool) {
  const agent = h.createAgent({ tools: [tool] })
  const { events, outcome } = await collect(agent.run('Go'))
  expectOrdered(events)
  expect(outcome.reason).toBe('completed')
  const history = await agent.history()
  expectValidHistory(history)
  return { agent, summary: summarizeHistory(history) }
}

/** A tool that answers with its `text` argument. */
function echoTool() {
  return defineTool({
    name: 'echo',
    description: 'Echoes',
    parameters: Type.Object({ text: Type.String() }),
    execute: ({ text }) => text,
  })
}

/**
 * Runs one response with `calls`, then a plain answer (`Finished.`); returns the events' and the
 * history's summary lines (all of them), checked for order and validity.
 */
async function runCalls(tools: Tool[], calls: ReturnType<typeof call>[], options = {}) {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: calls }), textReply('r2', 'Finished.'))
  const agent = h.createAgent({ tools, ...options })
  const { events, outcome } = await collect(agent.run('go'))
  expectOrdered(events)
  const history = await agent.history()
  expectValidHistory(history)
  expect(outcome).toMatchObject({ reason: 'completed', text: 'Finished.' })
  return { events, outcome, history, lines: summarize(events), historyLines: summarizeHistory(history), h }
}

/**
 * The whole event sequence of a `runCalls` task: the response announcing `calls` (`id name`), the
 * tool events `toolLines`, then the turn that answers `Finished.`.
 */
function taskLines(calls: readonly string[], toolLines: readonly unknown[]): unknown[] {
  return [
    'task_start',
    'user_message: go',
    'turn_start',
    ...calls.map((c) => `tool_call_start ${c}`),
    'response_complete: ',
    'usage 100/20',
    'context_usage 120/128000',
    ...toolLines,
    'turn_end',
    'turn_start',
    'assistant_text_start',
    'text: Finished.',
    'assistant_text_end',
    'response_complete: Finished.',
    'usage 100/20',
    'context_usage 120/128000',
    'turn_end',
    'task_metadata turns=2 subAgents=0',
    'task_finish completed: Finished.',
  ]
}

/** The whole history of a `runCalls` task: the response's `calls`, their `results`, the answer. */
function taskHistory(calls: string, results: readonly unknown[]): unknown[] {
  return [
    'user: go',
    `assistant tool_use: ${calls}`,
    ...results,
    'assistant stop: text "Finished."',
    'task_metadata turns=2 subAgents=0',
  ]
}

/** The `count` tool events of a `runCalls` task, where starts and results may interleave. */
function toolSection(lines: readonly string[], count: number): string[] {
  const from = lines.indexOf('context_usage 120/128000') + 1
  return lines.slice(from, from + count)
}

describe('tool calls of one response', () => {
  test('run concurrently, and results are persisted and emitted in call order when they finish out of order', async () => {
    const finished: string[] = []
    // The slow call also waits for the fast one to finish: a loaded machine may start the fast
    // call's timer more than 40 ms after the slow one's. Calls run one after the other would hang.
    const fastFinished = gate()
    const work = defineTool({
      name: 'work',
      description: 'Works for a while',
      parameters: Type.Object({ name: Type.String(), ms: Type.Number() }),
      execute: async ({ name, ms }) => {
        await delay(ms)
        if (name === 'slow') await fastFinished.promise
        finished.push(name)
        if (name === 'fast') fastFinished.open()
        return `${name} done`
      },
    })
    const { lines, historyLines, events, history } = await runCalls(
      [work],
      [call('c1', 'work', { name: 'slow', ms: 40 }), call('c2', 'work', { name: 'fast', ms: 0 })],
    )
    expect(finished).toEqual(['fast', 'slow'])
    // Both calls started at once, and the replay announces them together too.
    expect(replayedPart(events)).toEqual(replayOf(history, 'id1'))
    expect(lines).toEqual(
      taskLines(
        ['c1 work', 'c2 work'],
        [
          'tool_call c1 work {"name":"slow","ms":40}',
          'tool_call c2 work {"name":"fast","ms":0}',
          'tool_result c1 success: slow done',
          'tool_result c2 success (last): fast done',
        ],
      ),
    )
    expect(historyLines).toEqual(
      taskHistory('call c1 work {"name":"slow","ms":40} | call c2 work {"name":"fast","ms":0}', [
        'tool c1 success: slow done',
        'tool c2 success: fast done',
      ]),
    )
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
    const ids = ['c1', 'c2', 'c3', 'c4', 'c5']
    const { lines, historyLines } = await runCalls(
      [work],
      ids.map((id) => call(id, 'work', {})),
      { toolConcurrency: 2 },
    )
    expect(most).toBe(2)
    // Starts and results interleave as calls finish (timing); each kind comes in call order.
    const tools = toolSection(lines, 10)
    expect(lines).toEqual(
      taskLines(
        ids.map((id) => `${id} work`),
        tools,
      ),
    )
    expect(tools.filter((l) => l.startsWith('tool_call '))).toEqual(
      ids.map((id) => `tool_call ${id} work {}`),
    )
    expect(tools.filter((l) => l.startsWith('tool_result'))).toEqual(
      ids.map((id) => `tool_result ${id} success${id === 'c5' ? ' (last)' : ''}: ok`),
    )
    expect(historyLines).toEqual(
      taskHistory(
        ids.map((id) => `call ${id} work {}`).join(' | '),
        ids.map((id) => `tool ${id} success: ok`),
      ),
    )
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
    const { lines, historyLines } = await runCalls(
      [tool('a', true), tool('alone', false), tool('b', true)],
      [call('c1', 'a', {}), call('c2', 'alone', {}), call('c3', 'b', {})],
    )
    expect(log).toEqual(['start a', 'end a', 'start alone', 'end alone', 'start b', 'end b'])
    const tools = toolSection(lines, 6)
    expect(lines).toEqual(taskLines(['c1 a', 'c2 alone', 'c3 b'], tools))
    expect(tools.filter((l) => l.startsWith('tool_call '))).toEqual([
      'tool_call c1 a {}',
      'tool_call c2 alone {}',
      'tool_call c3 b {}',
    ])
    expect(tools.filter((l) => l.startsWith('tool_result'))).toEqual([
      'tool_result c1 success: a',
      'tool_result c2 success: alone',
      'tool_result c3 success (last): b',
    ])
    expect(historyLines).toEqual(
      taskHistory('call c1 a {} | call c2 alone {} | call c3 b {}', [
        'tool c1 success: a',
        'tool c2 success: alone',
        'tool c3 success: b',
      ]),
    )
  })
})

describe('tool failures are error results the model sees, and the loop goes on', () => {
  test('an unknown tool lists the available ones', async () => {
    const { lines, historyLines, h } = await runCalls([readFile], [call('c1', 'nope', {})])
    const text = 'Unknown tool "nope". Available tools: read_file.'
    expect(lines).toEqual(
      taskLines(['c1 nope'], ['tool_call c1 nope {}', `tool_result c1 error (last): ${text}`]),
    )
    expect(historyLines).toEqual(taskHistory('call c1 nope {}', [`tool c1 error: ${text}`]))
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
    const { lines, historyLines } = await runCalls([tool], [call('c1', 'read_file', '{"path": nope}')])
    expect(ran).toBe(false)
    const parseError = (() => {
      try {
        JSON.parse('{"path": nope}')
      } catch (error) {
        return (error as Error).message
      }
    })()
    const text = `Invalid arguments for tool "read_file": the arguments are not valid JSON (${parseError})`
    expect(lines).toEqual(
      taskLines(
        ['c1 read_file'],
        ['tool_call c1 read_file {"path": nope}', `tool_result c1 error (last): ${text}`],
      ),
    )
    // Not cut off (no `incomplete`): the call closed in a response that finished normally.
    expect(historyLines).toEqual(taskHistory('call c1 read_file {"path": nope}', [`tool c1 error: ${text}`]))
  })

  test('arguments that do not match the schema name the path and the problem', async () => {
    const { lines, historyLines } = await runCalls([readFile], [call('c1', 'read_file', { path: 5 })])
    const text = 'Invalid arguments for tool "read_file": /path: Expected string'
    expect(lines).toEqual(
      taskLines(
        ['c1 read_file'],
        ['tool_call c1 read_file {"path":5}', `tool_result c1 error (last): ${text}`],
      ),
    )
    expect(historyLines).toEqual(taskHistory('call c1 read_file {"path":5}', [`tool c1 error: ${text}`]))
  })

  test('arguments JSON reads ambiguously or lossily are refused, and the tool never runs with them', async () => {
    // A repeated key reads as its last value while a reviewer of the call may read the first; a
    // `__proto__` key (or `constructor.prototype`) swaps the prototype of a copy a tool makes with
    // Object.assign or a deep merge; an integer beyond 2^53 is silently rounded (an id changes).
    const seen: unknown[] = []
    const tool = defineTool({
      name: 'lookup',
      description: 'Looks up',
      parameters: Type.Object({
        id: Type.Union([Type.String(), Type.Number()]),
        meta: Type.Optional(Type.Any()),
      }),
      execute: (args) => {
        seen.push(args)
        return 'found'
      },
    })
    const { historyLines } = await runCalls(
      [tool],
      [
        call('c1', 'lookup', '{"id":"mine","id":"theirs"}'),
        call('c2', 'lookup', '{"id":"a","__proto__":{"admin":true}}'),
        call('c3', 'lookup', '{"id":"a","meta":{"x":[{"__pro\\u0074o__":{}}]}}'),
        call('c4', 'lookup', '{"id":"a","meta":{"constructor":{"prototype":{"admin":true}}}}'),
        call('c5', 'lookup', '{"id":9007199254740993}'),
        call('c6', 'lookup', '{"id":-123456789012345678901234567890}'),
        call('c7', 'lookup', '{"id":9007199254740991,"meta":{"constructor":"ok","big":1.5e300,"ids":[1,2]}}'),
      ],
    )
    const refused = (why: string) => `Invalid arguments for tool "lookup": ${why}`
    expect(historyLines.filter((line) => line.startsWith('tool '))).toEqual([
      `tool c1 error: ${refused('the key "id" appears twice in one object (at /)')}`,
      `tool c2 error: ${refused('a key named "__proto__" is not allowed (at /)')}`,
      `tool c3 error: ${refused('a key named "__proto__" is not allowed (at /meta/x/0)')}`,
      `tool c4 error: ${refused('a "constructor" key holding "prototype" is not allowed (at /meta)')}`,
      `tool c5 error: ${refused('the integer 9007199254740993 cannot be read exactly (beyond 2^53); send it as a string (at /id)')}`,
      `tool c6 error: ${refused('the integer -123456789012345678901234567890 cannot be read exactly (beyond 2^53); send it as a string (at /id)')}`,
      'tool c7 success: found',
    ])
    expect(seen).toHaveLength(1)
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
    const { lines, historyLines } = await runCalls([broken], [call('c1', 'broken', {})])
    expect(lines).toEqual(
      taskLines(['c1 broken'], ['tool_call c1 broken {}', 'tool_result c1 error (last): disk on fire']),
    )
    expect(historyLines).toEqual(taskHistory('call c1 broken {}', ['tool c1 error: disk on fire']))
  })

  test('formatToolError decides the text of a thrown error', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'Fails',
      parameters: Type.Object({}),
      execute: async () => Promise.reject(new RangeError('too far')),
    })
    const { lines, historyLines } = await runCalls([broken], [call('c1', 'broken', {})], {
      formatToolError: (error: unknown, c: { name: string }) => `${c.name}: ${(error as Error).name}`,
    })
    expect(lines).toEqual(
      taskLines(['c1 broken'], ['tool_call c1 broken {}', 'tool_result c1 error (last): broken: RangeError']),
    )
    expect(historyLines).toEqual(taskHistory('call c1 broken {}', ['tool c1 error: broken: RangeError']))
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
    const { lines, historyLines } = await runCalls([hang], [call('c1', 'hang', {})])
    const text = 'Tool "hang" timed out after 20 ms.'
    expect(lines).toEqual(
      taskLines(['c1 hang'], ['tool_call c1 hang {}', `tool_result c1 error (last): ${text}`]),
    )
    expect(historyLines).toEqual(taskHistory('call c1 hang {}', [`tool c1 error: ${text}`]))
    expect(signal?.aborted).toBe(true)
    expect((signal!.reason as DOMException).name).toBe('TimeoutError')
  })

  test('progress a call reports after it timed out is ignored, even while afterToolCall still has its result', async () => {
    const reported = gate()
    const late = defineTool({
      name: 'late',
      description: 'Reports progress after its time limit',
      parameters: Type.Object({}),
      timeoutMs: 20,
      execute: async (_args, ctx) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))
        ctx.progress('still going')
        reported.open()
        return 'too late'
      },
    })
    const { lines, historyLines } = await runCalls([late], [call('c1', 'late', {})], {
      // Holds the timed-out result until the tool has reported its late progress.
      hooks: { afterToolCall: async () => reported.promise },
    })
    const text = 'Tool "late" timed out after 20 ms.'
    expect(lines).toEqual(
      taskLines(['c1 late'], ['tool_call c1 late {}', `tool_result c1 error (last): ${text}`]),
    )
    expect(historyLines).toEqual(taskHistory('call c1 late {}', [`tool c1 error: ${text}`]))
  })

  test('the agent-wide toolTimeoutMs applies to tools without their own', async () => {
    const hang = defineTool({
      name: 'hang',
      description: 'Never returns',
      parameters: Type.Object({}),
      execute: () => new Promise<string>(() => {}),
    })
    const { lines, historyLines } = await runCalls([hang], [call('c1', 'hang', {})], { toolTimeoutMs: 15 })
    const text = 'Tool "hang" timed out after 15 ms.'
    expect(lines).toEqual(
      taskLines(['c1 hang'], ['tool_call c1 hang {}', `tool_result c1 error (last): ${text}`]),
    )
    expect(historyLines).toEqual(taskHistory('call c1 hang {}', [`tool c1 error: ${text}`]))
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
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: go',
      'turn_start',
      'assistant_text_start',
      'text: Reading.',
      'assistant_text_end',
      'tool_call_start c1 read_file',
      'response_complete: Reading.',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 read_file {"path": "a.t',
      `tool_result c1 error (last): ${INCOMPLETE_CALL_TEXT}`,
      'turn_end',
      'turn_start',
      'assistant_text_start',
      'text: Sorry.',
      'assistant_text_end',
      'response_complete: Sorry.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=2 subAgents=0',
      'task_finish completed: Sorry.',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: go',
      'assistant length: text "Reading." | call c1 read_file {"path": "a.t (incomplete)',
      `tool c1 error: ${INCOMPLETE_CALL_TEXT}`,
      'assistant stop: text "Sorry."',
      'task_metadata turns=2 subAgents=0',
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
    const { lines, historyLines } = await runCalls([bad], [call('c1', 'bad', {})])
    const text = 'Tool "bad" returned an invalid result: at /parts/0'
    expect(lines).toEqual(
      taskLines(
        ['c1 bad'],
        ['tool_call c1 bad {}', expect.stringMatching(`^tool_result c1 error \\(last\\): ${text}`)],
      ),
    )
    expect(historyLines).toEqual(
      taskHistory('call c1 bad {}', [expect.stringMatching(`^tool c1 error: ${text}`)]),
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
    const { history, lines, historyLines } = await runCalls([loud], [call('c1', 'loud', {})], {
      toolOutputLimit: 300,
    })
    const result = history[2] as { outputText: string }
    expect(lines).toEqual(
      taskLines(['c1 loud'], ['tool_call c1 loud {}', `tool_result c1 success (last): ${result.outputText}`]),
    )
    expect(historyLines).toEqual(taskHistory('call c1 loud {}', [`tool c1 success: ${result.outputText}`]))
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
    const { lines, history, historyLines, events } = await runCalls([plan], [call('c1', 'plan', {})])
    expect(lines).toEqual(
      taskLines(
        ['c1 plan'],
        [
          'tool_call c1 plan {}',
          'tool_result c1 success (last): Todo list updated.',
          'todo_change write tests=completed, ship=in_progress',
        ],
      ),
    )
    expect(historyLines).toEqual(taskHistory('call c1 plan {}', ['tool c1 success: Todo list updated.']))
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

  test("a result over the store's record limit is an error result the model reads, and the task goes on", async () => {
    const store = createMemorySessionStore({ maxRecordBytes: 20_000 })
    const image = `data:image/png;base64,${'A'.repeat(30_000)}`
    const shot = defineTool({
      name: 'shot',
      description: 'Takes a screenshot',
      parameters: Type.Object({}),
      execute: () => ({ outputText: 'Screenshot taken.', parts: [{ type: 'image_url', url: image }] }),
    })
    const small = defineTool({
      name: 'small',
      description: 'Answers briefly',
      parameters: Type.Object({}),
      execute: () => ({
        outputText: 'ok',
        parts: [{ type: 'image_url', url: 'data:image/png;base64,AAAA' }],
      }),
    })
    const { lines, history, h } = await runCalls(
      [shot, small],
      [call('c1', 'shot', {}), call('c2', 'small', {})],
      {
        store,
      },
    )
    const refused =
      /^Tool "shot" returned a result of (\d+) bytes, more than the session store keeps in one record \(20000 bytes\); it was not kept\.$/
    const c1 = lines.find((line) => line.startsWith('tool_result c1'))
    expect(c1).toMatch(/^tool_result c1 error: Tool "shot" returned a result of \d+ bytes/)
    expect(history[2]).toMatchObject({ role: 'tool', toolCallId: 'c1', status: 'error', parts: [] })
    const text = (history[2] as { outputText: string }).outputText
    expect(Number(refused.exec(text)?.[1])).toBeGreaterThan(30_000)
    expect(history[3]).toMatchObject({ role: 'tool', toolCallId: 'c2', status: 'success', outputText: 'ok' })
    // The model's next request carries the refusal as c1's result.
    const next = h.server.requests[1]!.body as { messages: { tool_call_id?: string; content: unknown }[] }
    expect(next.messages.find((m) => m.tool_call_id === 'c1')?.content).toBe(text)
  })

  test('text alone is measured against the record limit too when toolOutputLimit is off', async () => {
    const store = createMemorySessionStore({ maxRecordBytes: 20_000 })
    const repeat = defineTool({
      name: 'repeat',
      description: 'Repeats a character',
      parameters: Type.Object({ char: Type.String(), count: Type.Integer() }),
      execute: ({ char, count }) => char.repeat(count),
    })
    const { history } = await runCalls(
      [repeat],
      [
        call('c1', 'repeat', { char: 'x', count: 15_000 }),
        call('c2', 'repeat', { char: 'é', count: 15_000 }),
      ],
      { store, toolOutputLimit: Number.POSITIVE_INFINITY },
    )
    // 15,000 ASCII characters fit; 15,000 two-byte ones (30,000 bytes) do not.
    expect(history[2]).toMatchObject({ toolCallId: 'c1', status: 'success', outputText: 'x'.repeat(15_000) })
    expect(history[3]).toMatchObject({ toolCallId: 'c2', status: 'error' })
    expect((history[3] as { outputText: string }).outputText).toMatch(
      /^Tool "repeat" returned a result of 30\d{3} bytes, more than the session store keeps in one record/,
    )
  })

  test('status error in a structured result is an error result with its text', async () => {
    const soft = defineTool({
      name: 'soft',
      description: 'Fails softly',
      parameters: Type.Object({}),
      execute: () => ({ outputText: 'not found', status: 'error' }),
    })
    const { lines, historyLines } = await runCalls([soft], [call('c1', 'soft', {})])
    expect(lines).toEqual(
      taskLines(['c1 soft'], ['tool_call c1 soft {}', 'tool_result c1 error (last): not found']),
    )
    expect(historyLines).toEqual(taskHistory('call c1 soft {}', ['tool c1 error: not found']))
  })

  test('progress is persisted with its call and sibling ids, reaches the host between the call and its result, and replays', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Reports progress',
      parameters: Type.Object({}),
      concurrent: false,
      execute: async (_args, ctx) => {
        ctx.progress('halfway')
        await delay(1)
        ctx.progress('almost')
        return 'done'
      },
    })
    const { lines, historyLines, history } = await runCalls(
      [slow],
      [call('c1', 'slow', {}), call('c2', 'slow', {})],
    )
    // Each call's events and records in order (the two calls' may interleave).
    const of = (id: string, list: string[]) =>
      list.filter((line) => line.split(' ')[1]?.replace(':', '') === id)
    const other = { c1: 'c2', c2: 'c1' } as const
    for (const id of ['c1', 'c2'] as const) {
      const last = id === 'c2' ? ' (last)' : ''
      expect(of(id, lines)).toEqual([
        `tool_call_start ${id} slow`,
        `tool_call ${id} slow {}`,
        `tool_progress ${id}: halfway (siblings ${other[id]})`,
        `tool_progress ${id}: almost (siblings ${other[id]})`,
        `tool_result ${id} success${last}: done`,
      ])
      expect(of(id, historyLines.slice(2))).toEqual([
        `tool_progress ${id}: halfway (siblings ${other[id]})`,
        `tool_progress ${id}: almost (siblings ${other[id]})`,
        `tool ${id} success: done`,
      ])
      // Replay announces the call before its progress, as it was live.
      const replay = deriveReplayEvents(history, { sessionId: 'id1' })
      expectOrdered(replay)
      expect(of(id, summarize(replay))).toEqual([
        `tool_call ${id} slow {}`,
        `tool_progress ${id}: halfway (siblings ${other[id]})`,
        `tool_progress ${id}: almost (siblings ${other[id]})`,
        `tool_result ${id} success${last}: done`,
      ])
    }
    expect(historyLines.length).toBe(taskHistory('', []).length + 6)
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

test('two calls with one id from the model each run and get their own result under a unique id', async () => {
  const h = harness()
  h.server.enqueue(
    chatStream({
      id: 'r1',
      steps: [
        call('c1', 'echo', { text: 'a' }),
        call('c1', 'echo', { text: 'b' }),
        call('c1_2', 'echo', { text: 'c' }),
      ],
    }),
  )
  h.server.enqueue(textReply('r2', 'Done.'))
  const { summary } = await runToTheEnd(h, echoTool())
  expect(summary).toEqual([
    'user: Go',
    'assistant tool_use: call c1 echo {"text":"a"} | call c1_3 echo {"text":"b"} | call c1_2 echo {"text":"c"}',
    'tool c1 success: a',
    'tool c1_3 success: b',
    'tool c1_2 success: c',
    'assistant stop: text "Done."',
    'task_metadata turns=2 subAgents=0',
  ])
  // What the next request sent back: each call answered once, under its own id.
  const sent = JSON.stringify(h.server.requests[1]!.body)
  expect(sent).toContain('"tool_call_id":"c1_3"')
})

test('a server that numbers its calls afresh in every response gets each call under an id the session has not used', async () => {
  const h = harness()
  h.server.enqueue(chatStream({ id: 'r1', steps: [call('call_0', 'echo', { text: 'a' })] }))
  h.server.enqueue(
    chatStream({
      id: 'r2',
      steps: [call('call_0', 'echo', { text: 'b' }), call('call_0_2', 'echo', { text: 'c' })],
    }),
  )
  h.server.enqueue(textReply('r3', 'Done.'))
  const echo = echoTool()
  const { agent, summary } = await runToTheEnd(h, echo)
  expect(summary).toEqual([
    'user: Go',
    'assistant tool_use: call call_0 echo {"text":"a"}',
    'tool call_0 success: a',
    'assistant tool_use: call call_0_3 echo {"text":"b"} | call call_0_2 echo {"text":"c"}',
    'tool call_0_3 success: b',
    'tool call_0_2 success: c',
    'assistant stop: text "Done."',
    'task_metadata turns=3 subAgents=0',
  ])
  // The last request's history repeats no call id, and answers each call once.
  const sent = h.server.requests[2]!.body as {
    messages: { tool_calls?: { id: string }[]; tool_call_id?: string }[]
  }
  const callIds = sent.messages.flatMap((message) => (message.tool_calls ?? []).map((c) => c.id))
  const answered = sent.messages.flatMap((message) => (message.tool_call_id ? [message.tool_call_id] : []))
  expect(callIds).toEqual(['call_0', 'call_0_3', 'call_0_2'])
  expect(answered).toEqual(callIds)

  // A later task, on the history read back, still avoids the ids of the session.
  h.server.enqueue(chatStream({ id: 'r4', steps: [call('call_0', 'echo', { text: 'd' })] }))
  h.server.enqueue(textReply('r5', 'Again.'))
  const again = h.createAgent({ tools: [echo], sessionId: agent.sessionId })
  await collect(again.run('Once more'))
  const later = summarizeHistory(await again.history())
  expect(later).toContain('assistant tool_use: call call_0_4 echo {"text":"d"}')
  expect(later).toContain('tool call_0_4 success: d')
})
