import {
  type Agent,
  AgentError,
  CODE_EXECUTION_TOOL,
  CodeExecutionParameters,
  codeActFormatter,
  defineTool,
} from '@kode/core'
import type { Event } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { say, stalledChatStream, textReply } from './helpers/chat-wire.js'
import { collect, collectInterrupting, gate, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

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

describe('a CodeAct task', () => {
  test('each code block runs through the code tool; a failure is an observation the model fixes', async () => {
    const h = harness()
    h.server.enqueue(
      textReply('r1', `Thought: compute it.\n${block('print(undefined_name)')}`),
      textReply('r2', `Thought: I used a wrong name.\n${block('print(6 * 7)')}`),
      textReply('r3', 'Thought: done.\nFinal Answer: 42'),
    )
    const agent = h.createAgent({ tools: [fakePython], historyFormatter: codeActFormatter() })
    const { events, outcome } = await collect(agent.run('What is 6 times 7?'))

    expectOrdered(events)
    expect(summarize(events).filter((line) => line.startsWith('tool_'))).toEqual([
      'tool_call call_m1_0 code_execution {"code":"print(undefined_name)","language":"python"}',
      "tool_result call_m1_0 error (last): NameError: name 'undefined_name' is not defined",
      'tool_call call_m2_0 code_execution {"code":"print(6 * 7)","language":"python"}',
      'tool_result call_m2_0 success (last): python ran: print(6 * 7)',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', text: '42' })
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)[1]).toBe(
      `assistant stop: text "Thought: compute it.\n${block('print(undefined_name)')}" | call call_m1_0 code_execution {"code":"print(undefined_name)","language":"python"}`,
    )
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
    expect(summarize(events).filter((line) => line.startsWith('tool_result'))).toEqual([
      'tool_result call_m1_0 success: python ran: a = 1',
      'tool_result call_m1_1 success (last): python ran: b = 2',
    ])
    const body = h.server.requests[0]!.body as { tools: { function: { name: string } }[] }
    expect(body.tools.map((tool) => tool.function.name)).toEqual(['read_file'])
  })

  test('an agent without the code tool is refused at creation', () => {
    const h = harness()
    expect(() => h.createAgent({ tools: [readFile], historyFormatter: codeActFormatter() })).toThrow(
      AgentError,
    )
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
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history).slice(1, 3)).toEqual([
      `assistant stop: text "${block('while True: pass')}" | call call_m1_0 code_execution {"code":"while True: pass","language":"python"}`,
      'tool call_m1_0 aborted: The user interrupted this tool call before it finished.',
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
    expect(events.some((event) => event.type === 'tool_call')).toBe(false)
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)[1]).toBe('assistant aborted: text "Thought: try.\n```python\nprint(1 +"')
  })
})
