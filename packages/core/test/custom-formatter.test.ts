import { type HistoryFormatter, nativeFormatter } from '@kode/core'
import { joinText } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize } from './helpers/summarize.js'
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
    expect(summarize(events).filter((line) => line.startsWith('tool_result'))).toEqual([
      'tool_result call_m1_0 success: contents of a',
      'tool_result call_m1_1 success (last): contents of b',
    ])
    expect(outcome.text).toBe('Both say hello.')
    expectValidHistory(await agent.history())
    const first = h.server.requests[0]!.body as { tools?: unknown; messages: { content: string }[] }
    expect(first.tools).toBeUndefined()
    expect(first.messages[0]!.content).toMatch(/^Call a tool by writing <call name="TOOL">/)
  })
})
