import {
  CODE_EXECUTION_TOOL,
  CodeExecutionParameters,
  codeActFormatter,
  compactedHistory,
  createProviderView,
  defineTool,
  type HistoryFormatter,
  reactFormatter,
  type Tool,
} from '@kode/core'
import { joinText, type Message } from '@kode/protocol'
import type { RecordedRequest } from '@kode/providers/testing'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { chatStream, say, textReply } from '../helpers/chat-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import { bodyTokens, chatMessages, compactionsOf, isSummaryRequest, TINY } from '../helpers/small-window.js'

const chunk = (n: number) => `chunk ${n}: ${'log line with some words in it; '.repeat(12)}`
const readChunk = defineTool({
  name: 'read_chunk',
  description: 'Reads one chunk of the log',
  parameters: Type.Object({ n: Type.Integer() }),
  execute: ({ n }) => chunk(n),
})
const python = defineTool({
  name: CODE_EXECUTION_TOOL,
  description: 'Runs Python 3.',
  parameters: CodeExecutionParameters,
  execute: ({ code }) => `ran ${code}\n${chunk(0)}`,
})

/** The role and text of each non-system message, on the wire and in the engine's view alike. */
function wireShape(request: RecordedRequest): string[] {
  return chatMessages(request)
    .filter((m) => m.role !== 'system')
    .map((m) => {
      const content = m.content
      const text =
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content.map((p: { text?: string }) => p.text ?? '').join('')
            : ''
      return `${m.role}: ${text}`
    })
}
function viewShape(messages: readonly Message[]): string[] {
  return messages
    .filter((m) => m.role !== 'system')
    .map((m) => `${m.role}: ${m.role === 'tool' ? m.outputText : joinText(m.parts)}`)
}

const cases: {
  name: string
  formatter: () => HistoryFormatter
  tool: Tool
  say: (n: number) => string
}[] = [
  {
    name: 'ReAct',
    formatter: () => reactFormatter({ history: 'text' }),
    tool: readChunk,
    say: (n) => `Thought: step ${n}\nAction: read_chunk\nArgs: {"n": ${n}}`,
  },
  {
    name: 'CodeAct',
    formatter: () => codeActFormatter(),
    tool: python,
    say: (n) => `Thought: step ${n}\n\`\`\`python\nprint(${n})\n\`\`\``,
  },
]

describe('text formatters over a compacted view', { timeout: 60_000 }, () => {
  const harness = useHarness()

  test.each(cases)('$name: every request equals a fresh formatting of the compacted history', async (c) => {
    const h = harness()
    const formatter = c.formatter()
    const instructions = formatter.instructions([
      { name: c.tool.name, description: c.tool.description, parameters: c.tool.parameters },
    ])
    const mismatches: string[] = []
    let main = 0
    let summaries = 0
    h.server.handle(async (request) => {
      const usage = { prompt: bodyTokens(request), completion: 20 }
      if (isSummaryRequest(request))
        return chatStream({ id: `s${++summaries}`, steps: [say(`Summary ${summaries}.`)], usage })
      // What a fresh view of the persisted history would send now, with no cache at all.
      const history = await h.store.read(agent.sessionId)
      const fresh = createProviderView(formatter, instructions).update(compactedHistory(history).records)
      const sent = wireShape(request)
      if (JSON.stringify(sent) !== JSON.stringify(viewShape(fresh))) mismatches.push(`request ${main + 1}`)
      main++
      return main > 60
        ? textReply(`r${main}`, 'Final Answer: done')
        : chatStream({ id: `r${main}`, steps: [say(c.say(main))], usage })
    })
    const agent = h.createAgent({
      client: h.client({ model: 'tiny', catalog: TINY }),
      tools: [c.tool],
      historyFormatter: formatter,
      maxTurns: 100,
    })
    const { outcome } = await collect(agent.run('Read the log'))
    expect(outcome.reason).toBe('completed')
    expect(compactionsOf(await agent.history()).length).toBeGreaterThanOrEqual(2)
    expect(main).toBe(61)
    expect(mismatches).toEqual([])
    const compactedRequests = h.server.requests.filter(
      (r) => !isSummaryRequest(r) && r.rawBody.includes('Summary 1.'),
    )
    expect(compactedRequests.length).toBeGreaterThan(0)
  })
})
