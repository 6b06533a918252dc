import { type HistoryFormatter, nativeFormatter } from '@kode/core'
import { joinText } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory, textResponse } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

/** The guide's example (docs/history-formatters.md): tools called with `<call name="...">{...}</call>`. */
function xmlCallsFormatter(): HistoryFormatter {
  return {
    ...nativeFormatter(),
    name: 'xml-calls',
    instructions: (tools) => ({
      system: [
        'Call a tool by writing <call name="TOOL">{ JSON arguments }</call>, then stop. Tools:',
        ...tools.map((tool) => `- ${tool.name}: ${tool.description} ${JSON.stringify(tool.parameters)}`),
      ].join('\n'),
    }),
    parseActions: (message) =>
      [...joinText(message.parts).matchAll(/<call name="([\w-]+)">([\s\S]*?)<\/call>/g)].map((match) => ({
        name: match[1]!,
        argumentsJson: match[2]!.trim(),
      })),
    // An interrupted response's calls are not complete `<call>` elements: nothing to record.
    needsPendingPlaceholder: () => false,
  }
}

describe('a custom formatter', () => {
  test('built from the native one, it changes only how actions are stated', async () => {
    const h = harness()
    h.server.enqueue(
      textReply(
        'r1',
        'Reading both. <call name="read_file">{"path": "a"}</call> <call name="read_file">{"path": "b"}</call>',
      ),
      textReply('r2', 'Both say hello.'),
    )
    const agent = h.createAgent({ tools: [readFile], historyFormatter: xmlCallsFormatter() })
    const { events, outcome } = await collect(agent.run('Read a and b'))

    expectOrdered(events)
    const text =
      'Reading both. <call name="read_file">{"path": "a"}</call> <call name="read_file">{"path": "b"}</call>'
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Read a and b',
      ...textResponse(text),
      'tool_call call_m1_0 read_file {"path": "a"}',
      'tool_call call_m1_1 read_file {"path": "b"}',
      'tool_result call_m1_0 success: contents of a',
      'tool_result call_m1_1 success (last): contents of b',
      'turn_end',
      ...textResponse('Both say hello.'),
      'turn_end',
      'task_metadata turns=2 subAgents=0',
      'task_finish completed: Both say hello.',
    ])
    expect(outcome.text).toBe('Both say hello.')
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Read a and b',
      `assistant stop: text "${text}" | call call_m1_0 read_file {"path": "a"} | call call_m1_1 read_file {"path": "b"}`,
      'tool call_m1_0 success: contents of a',
      'tool call_m1_1 success: contents of b',
      'assistant stop: text "Both say hello."',
      'task_metadata turns=2 subAgents=0',
    ])
    const first = h.server.requests[0]!.body as { tools?: unknown; messages: { content: string }[] }
    expect(first.tools).toBeUndefined()
    expect(first.messages[0]!.content).toMatch(/^Call a tool by writing <call name="TOOL">/)
  })
})
