import {
  type Agent,
  AgentError,
  CODE_EXECUTION_TOOL,
  CodeExecutionParameters,
  codeActFormatter,
  defineSubAgent,
  defineTool,
  nativeFormatter,
  type Tool,
} from '@kode/core'
import { checkEventOrder, type Event } from '@kode/protocol'
import { INCOMPLETE_CALL_TEXT } from '@kode/protocol/helpers'
import { deriveReplayEvents, exportHtml } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say, stalledChatStream, textReply } from './helpers/chat-wire.js'
import { collect, collectInterrupting, gate, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory, textResponse } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

type ChatBody = {
  messages: { role: string; content?: unknown }[]
  tools?: { function: { name: string } }[]
}

/** A stand-in interpreter: code mentioning `undefined_name` fails, other code "prints" itself. */
const fakePython = defineTool({
  name: CODE_EXECUTION_TOOL,
  description: 'Runs Python 3.',
  parameters: CodeExecutionParameters,
  execute: ({ code, language }) =>
    code.includes('undefined_name')
      ? { outputText: "NameError: name 'undefined_name' is not defined", status: 'error' }
      : `${language} ran: ${code}`,
})

const block = (code: string) => `\`\`\`python\n${code}\n\`\`\``

/** Fails once, then fixes its code and answers 42. */
function failThenFix(h: ReturnType<typeof harness>): void {
  h.server.enqueue(
    textReply('r1', `Thought: compute it.\n${block('print(undefined_name)')}`),
    textReply('r2', `Thought: I used a wrong name.\n${block('print(6 * 7)')}`),
    textReply('r3', 'Thought: done.\nFinal Answer: 42'),
  )
}

describe('a CodeAct task', () => {
  test('each code block runs through the code tool; a failure is an observation the model fixes', async () => {
    const h = harness()
    failThenFix(h)
    const agent = h.createAgent({ tools: [fakePython], historyFormatter: codeActFormatter() })
    const { events, outcome } = await collect(agent.run('What is 6 times 7?'))

    expectOrdered(events)
    const nameError = "NameError: name 'undefined_name' is not defined"
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: What is 6 times 7?',
      ...textResponse(`Thought: compute it.\n${block('print(undefined_name)')}`),
      'tool_call call_m1_0 code_execution {"code":"print(undefined_name)","language":"python"}',
      `tool_result call_m1_0 error (last): ${nameError}`,
      'turn_end',
      ...textResponse(`Thought: I used a wrong name.\n${block('print(6 * 7)')}`),
      'tool_call call_m2_0 code_execution {"code":"print(6 * 7)","language":"python"}',
      'tool_result call_m2_0 success (last): python ran: print(6 * 7)',
      'turn_end',
      ...textResponse('Thought: done.\nFinal Answer: 42'),
      'turn_end',
      'task_metadata turns=3 subAgents=0',
      'task_finish completed: 42',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', text: '42' })
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: What is 6 times 7?',
      `assistant stop: text "Thought: compute it.\n${block('print(undefined_name)')}" | call call_m1_0 code_execution {"code":"print(undefined_name)","language":"python"}`,
      `tool call_m1_0 error: ${nameError}`,
      `assistant stop: text "Thought: I used a wrong name.\n${block('print(6 * 7)')}" | call call_m2_0 code_execution {"code":"print(6 * 7)","language":"python"}`,
      'tool call_m2_0 success: python ran: print(6 * 7)',
      'assistant stop: text "Thought: done.\nFinal Answer: 42"',
      'task_metadata turns=3 subAgents=0',
    ])
    // The code tool is the agent's only tool: no native tools, so the observation goes back as text.
    expect((h.server.requests[1]!.body as { messages: unknown[] }).messages.at(-1)).toEqual({
      role: 'user',
      content: `Observation (error): ${nameError}`,
    })
    const body = h.server.requests[0]!.body as { tools?: unknown; messages: { content: string }[] }
    expect(body.tools).toBeUndefined()
    expect(body.messages[0]!.content).toContain('How the code runs: Runs Python 3.')
  })

  test('several blocks in one response run in order; other tools stay native tools', async () => {
    const h = harness()
    h.server.enqueue(
      textReply('r1', `${block('a = 1')}\nthen\n${block('b = 2')}`),
      textReply('r2', 'Final Answer: both ran'),
    )
    const agent = h.createAgent({ tools: [fakePython, readFile], historyFormatter: codeActFormatter() })
    const { events } = await collect(agent.run('Run two blocks'))
    expectOrdered(events)
    const text = `${block('a = 1')}\nthen\n${block('b = 2')}`
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Run two blocks',
      ...textResponse(text),
      'tool_call call_m1_0 code_execution {"code":"a = 1","language":"python"}',
      'tool_call call_m1_1 code_execution {"code":"b = 2","language":"python"}',
      'tool_result call_m1_0 success: python ran: a = 1',
      'tool_result call_m1_1 success (last): python ran: b = 2',
      'turn_end',
      ...textResponse('Final Answer: both ran'),
      'turn_end',
      'task_metadata turns=2 subAgents=0',
      'task_finish completed: both ran',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Run two blocks',
      `assistant stop: text "${text}" | call call_m1_0 code_execution {"code":"a = 1","language":"python"} | call call_m1_1 code_execution {"code":"b = 2","language":"python"}`,
      'tool call_m1_0 success: python ran: a = 1',
      'tool call_m1_1 success: python ran: b = 2',
      'assistant stop: text "Final Answer: both ran"',
      'task_metadata turns=2 subAgents=0',
    ])
    const [first, second] = h.server.requests.map((r) => r.body as ChatBody)
    expect(first!.tools!.map((tool) => tool.function.name)).toEqual(['read_file'])
    // The requests declare a native tool, so past code calls go back as tool calls.
    expect(second!.messages.slice(2)).toMatchObject([
      { role: 'assistant', tool_calls: [{ id: 'call_m1_0' }, { id: 'call_m1_1' }] },
      { role: 'tool', tool_call_id: 'call_m1_0', content: 'python ran: a = 1' },
      { role: 'tool', tool_call_id: 'call_m1_1', content: 'python ran: b = 2' },
    ])
  })

  test('a model that writes CRLF line endings: its block closes, runs alone, and the next answer ends the task', async () => {
    const h = harness()
    const crlf = 'Thought: two blocks.\r\n```python\r\na = 1\r\n```\r\n```python\r\nprint(a)\r\n```\r\n'
    h.server.enqueue(textReply('r1', crlf), textReply('r2', 'Final Answer: done'))
    const agent = h.createAgent({ tools: [fakePython], historyFormatter: codeActFormatter() })
    const { events, outcome } = await collect(agent.run('Run it'))
    expectOrdered(events)
    expect(summarize(events).filter((line) => line.startsWith('tool_'))).toEqual([
      'tool_call call_m1_0 code_execution {"code":"a = 1","language":"python"}',
      'tool_call call_m1_1 code_execution {"code":"print(a)","language":"python"}',
      'tool_result call_m1_0 success: python ran: a = 1',
      'tool_result call_m1_1 success (last): python ran: print(a)',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', text: 'done' })
  })

  test('a block cut off by length is never run: the model reads why, and the loop goes on', async () => {
    const h = harness()
    const cut = `Thought: add them up.\n\`\`\`python\nprint(sum(range(1, 1`
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [say(cut)], finish: 'length' }),
      textReply('r2', `Thought: again, shorter.\n${block('print(5050)')}`),
      textReply('r3', 'Final Answer: 5050'),
    )
    const agent = h.createAgent({ tools: [fakePython], historyFormatter: codeActFormatter() })
    const { events, outcome } = await collect(agent.run('Sum 1 to 100'))

    expectOrdered(events)
    const cutCall = '{"code":"print(sum(range(1, 1","language":"python"}'
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Sum 1 to 100',
      ...textResponse(cut),
      `tool_call call_m1_0 code_execution ${cutCall}`,
      `tool_result call_m1_0 error (last): ${INCOMPLETE_CALL_TEXT}`,
      'turn_end',
      ...textResponse(`Thought: again, shorter.\n${block('print(5050)')}`),
      'tool_call call_m2_0 code_execution {"code":"print(5050)","language":"python"}',
      'tool_result call_m2_0 success (last): python ran: print(5050)',
      'turn_end',
      ...textResponse('Final Answer: 5050'),
      'turn_end',
      'task_metadata turns=3 subAgents=0',
      'task_finish completed: 5050',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', text: '5050' })
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Sum 1 to 100',
      `assistant length: text "${cut}" | call call_m1_0 code_execution ${cutCall} (incomplete)`,
      `tool call_m1_0 error: ${INCOMPLETE_CALL_TEXT}`,
      `assistant stop: text "Thought: again, shorter.\n${block('print(5050)')}" | call call_m2_0 code_execution {"code":"print(5050)","language":"python"}`,
      'tool call_m2_0 success: python ran: print(5050)',
      'assistant stop: text "Final Answer: 5050"',
      'task_metadata turns=3 subAgents=0',
    ])
    // The next request tells the model its cut block did not run.
    expect((h.server.requests[1]!.body as ChatBody).messages.slice(1)).toEqual([
      { role: 'user', content: 'Sum 1 to 100' },
      { role: 'assistant', content: cut },
      { role: 'user', content: `Observation (error): ${INCOMPLETE_CALL_TEXT}` },
    ])
  })

  test('replay and export show the code actions like a native run', async () => {
    const h = harness()
    failThenFix(h)
    const agent = h.createAgent({ tools: [fakePython], historyFormatter: codeActFormatter() })
    const { events } = await collect(agent.run('What is 6 times 7?'))
    const history = await agent.history()

    // Replay derives the live run's events from the history (the turn's own streaming aside).
    const replay = deriveReplayEvents(history, { sessionId: agent.sessionId })
    expect(checkEventOrder(replay)).toEqual([])
    const toolLines = (lines: string[]) => lines.filter((line) => /^tool_(call|result) /.test(line))
    expect(toolLines(summarize(replay))).toEqual(toolLines(summarize(events)))
    expect(toolLines(summarize(replay))).toEqual([
      'tool_call call_m1_0 code_execution {"code":"print(undefined_name)","language":"python"}',
      "tool_result call_m1_0 error (last): NameError: name 'undefined_name' is not defined",
      'tool_call call_m2_0 code_execution {"code":"print(6 * 7)","language":"python"}',
      'tool_result call_m2_0 success (last): python ran: print(6 * 7)',
    ])
    const html = exportHtml(history)
    expect(html.match(/code_execution/g)?.length).toBeGreaterThanOrEqual(2)
    expect(html).toContain('print(6 * 7)')
    expect(html).toContain('python ran: print(6 * 7)')
    expect(html).toContain('NameError')
  })

  test('an agent without the code tool is refused at creation', () => {
    const h = harness()
    expect(() => h.createAgent({ tools: [readFile], historyFormatter: codeActFormatter() })).toThrow(
      AgentError,
    )
  })
})

describe('a sub-agent of a CodeAct agent', () => {
  const refusal = (name: string) =>
    `the sub-agent ${name} uses its parent's history formatter, which cannot work with its tools: codeActFormatter: the agent has no tool "code_execution" to run code blocks (define one with CodeExecutionParameters). Give the sub-agent a historyFormatter of its own (nativeFormatter(), say).`

  test('one that would inherit CodeAct without the code tool is refused when the agent is made, at any depth', () => {
    const h = harness()
    const researcher = defineSubAgent({ name: 'researcher', description: 'Researches', tools: [readFile] })
    const create = (tools: Tool[]) => () => h.createAgent({ tools, historyFormatter: codeActFormatter() })
    expect(create([fakePython, researcher])).toThrow(new AgentError('invalid_options', refusal('researcher')))
    // Nested: the lead has the code tool, its own sub-agent does not.
    const lead = defineSubAgent({ name: 'lead', description: 'Leads', tools: [fakePython, researcher] })
    expect(create([fakePython, lead])).toThrow(new AgentError('invalid_options', refusal('researcher')))
    // setTools refuses it too, and keeps the tools the agent had.
    const agent = h.createAgent({ tools: [fakePython], historyFormatter: codeActFormatter() })
    expect(() => agent.setTools([fakePython, researcher])).toThrow(refusal('researcher'))
    // A formatter of its own, or the code tool, makes it fine.
    const native = defineSubAgent({
      name: 'researcher',
      description: 'Researches',
      tools: [readFile],
      historyFormatter: nativeFormatter(),
    })
    expect(create([fakePython, native])).not.toThrow()
    const coder = defineSubAgent({ name: 'coder', description: 'Codes', tools: [fakePython] })
    expect(create([fakePython, coder])).not.toThrow()
    // One sub-agent under two parents is checked under the formatter each passes on.
    const nativeLead = defineSubAgent({
      name: 'native_lead',
      description: 'Leads natively',
      tools: [researcher],
      historyFormatter: nativeFormatter(),
    })
    expect(create([fakePython, nativeLead, lead])).toThrow(refusal('researcher'))
    // A sub-agent among its own tools (the array filled after) does not loop.
    const loopTools: Tool[] = [fakePython]
    const looping = defineSubAgent({ name: 'looping', description: 'Loops', tools: loopTools })
    loopTools.push(looping)
    expect(create([fakePython, looping])).not.toThrow()
  })

  test('one started by a tool with ctx.runSubAgent fails that call naming itself and the fix', async () => {
    const h = harness()
    const delegate = defineTool({
      name: 'delegate',
      description: 'Delegates',
      parameters: Type.Object({}),
      execute: async (_args, ctx) =>
        (await ctx.runSubAgent({ name: 'researcher', tools: [readFile] }, 'look it up')).text,
    })
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'delegate', {})] }),
      textReply('r2', 'Final Answer: could not'),
    )
    const agent = h.createAgent({ tools: [fakePython, delegate], historyFormatter: codeActFormatter() })
    const { events, outcome } = await collect(agent.run('Go'))
    expect(outcome.reason).toBe('completed')
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({
      toolCallId: 'c1',
      status: 'error',
      result: refusal('researcher'),
    })
  })
})

describe('an interrupted CodeAct action', () => {
  const runUntil = (agent: Agent, stop: (event: Event) => boolean) => collectInterrupting(agent, 'Go', stop)

  test('while the code runs: the tool is signalled and the call gets an aborted result', async () => {
    const h = harness()
    const started = gate()
    let signalled = false
    const hangingPython = defineTool({
      name: CODE_EXECUTION_TOOL,
      description: 'Runs Python 3.',
      parameters: CodeExecutionParameters,
      execute: (_args, ctx) => {
        ctx.signal.addEventListener('abort', () => {
          signalled = true
        })
        started.open()
        return new Promise<string>(() => {})
      },
    })
    h.server.enqueue(textReply('r1', block('while True: pass')), textReply('r2', 'Final Answer: stopped'))
    const agent = h.createAgent({ tools: [hangingPython], historyFormatter: codeActFormatter() })
    const { events, outcome } = await runUntil(agent, (event) => event.type === 'tool_call')

    expectOrdered(events)
    expect(outcome.reason).toBe('aborted')
    expect(signalled).toBe(true)
    const running = 'The user interrupted this tool call before it finished.'
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Go',
      ...textResponse(block('while True: pass')),
      'tool_call call_m1_0 code_execution {"code":"while True: pass","language":"python"}',
      `tool_result call_m1_0 error (last): ${running}`,
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      `task_finish aborted: ${block('while True: pass')}`,
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Go',
      `assistant stop: text "${block('while True: pass')}" | call call_m1_0 code_execution {"code":"while True: pass","language":"python"}`,
      `tool call_m1_0 aborted: ${running}`,
      'task_metadata turns=1 subAgents=0',
    ])
    expect((await collect(agent.run('Next'))).outcome).toMatchObject({ reason: 'completed', text: 'stopped' })
  })

  test('while a block streams: the half-written code stays text and nothing runs', async () => {
    const h = harness()
    h.server.enqueue(stalledChatStream({ id: 'r1', steps: [say('Thought: try.\n```python\nprint(1 +')] }))
    const agent = h.createAgent({ tools: [fakePython], historyFormatter: codeActFormatter() })
    const { events } = await runUntil(
      agent,
      (event) => event.type === 'assistant_text_delta' && event.content.includes('+'),
    )

    expectOrdered(events)
    const cut = 'Thought: try.\n```python\nprint(1 +'
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Go',
      'turn_start',
      'assistant_text_start',
      `text: ${cut}`,
      'assistant_text_end',
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      `task_finish aborted: ${cut}`,
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Go',
      `assistant aborted: text "${cut}"`,
      'task_metadata turns=1 subAgents=0',
    ])
  })
})
