import {
  CODE_EXECUTION_TOOL,
  CodeExecutionParameters,
  codeActFormatter,
  defineTool,
  type HistoryFormatter,
  nativeFormatter,
  reactFormatter,
} from '@kode/core'
import type { Message } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

/** Wraps a formatter, counting how often each message is converted for the provider view. */
function counting(formatter: HistoryFormatter) {
  const byMessage = new Map<string, number>()
  let total = 0
  const count = (message: Message) => {
    total++
    byMessage.set(message.id, (byMessage.get(message.id) ?? 0) + 1)
  }
  const wrapped: HistoryFormatter = {
    ...formatter,
    isAction: (message) => {
      count(message)
      return formatter.isAction(message)
    },
    formatResult: (result, instructions) => {
      count(result)
      return formatter.formatResult(result, instructions)
    },
  }
  return { wrapped, byMessage, total: () => total }
}

const reading = (turn: number) => `Thought: step ${turn}\nAction: read_file\nArgs: {"path": "${turn}.txt"}`
const coding = (turn: number) => `Thought: step ${turn}\n\`\`\`python\nprint(${turn})\n\`\`\``

const python = defineTool({
  name: CODE_EXECUTION_TOOL,
  description: 'Runs Python 3.',
  parameters: CodeExecutionParameters,
  execute: ({ code }) => `ran ${code}`,
})

describe('incremental formatting', () => {
  test('each request converts only the messages that are new since the last one', async () => {
    const h = harness()
    const counter = counting(reactFormatter({ history: 'text' }))
    const atRequest: number[] = []
    h.server.handle(() => {
      atRequest.push(counter.total())
      const turn = atRequest.length
      return textReply(`r${turn}`, turn % 6 === 0 ? 'Final Answer: done' : reading(turn))
    })
    const agent = h.createAgent({ tools: [readFile], historyFormatter: counter.wrapped })
    await collect(agent.run('Read five files'))
    await collect(agent.run('And five more'))

    // Per request: the previous response and its result; a task's first request converts its
    // first turn's predecessors (the previous task's answer) only.
    const perRequest = atRequest.map((total, i) => total - (atRequest[i - 1] ?? 0))
    expect(perRequest).toEqual([0, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2])
    expect(h.server.requests).toHaveLength(12)
    expect([...counter.byMessage.values()].every((n) => n === 1)).toBe(true)
  })

  test('the CodeAct formatter converts only what is new too', async () => {
    const h = harness()
    const counter = counting(codeActFormatter())
    const atRequest: number[] = []
    h.server.handle(() => {
      atRequest.push(counter.total())
      const turn = atRequest.length
      return textReply(`r${turn}`, turn % 6 === 0 ? 'Final Answer: done' : coding(turn))
    })
    const agent = h.createAgent({ tools: [python], historyFormatter: counter.wrapped })
    await collect(agent.run('Run five programs'))
    await collect(agent.run('And five more'))

    const perRequest = atRequest.map((total, i) => total - (atRequest[i - 1] ?? 0))
    expect(perRequest).toEqual([0, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2])
    expect(h.server.requests).toHaveLength(12)
    expect([...counter.byMessage.values()].every((n) => n === 1)).toBe(true)
  })

  test('the native formatter converts each message once too', async () => {
    const h = harness()
    const counter = counting(nativeFormatter())
    let turn = 0
    h.server.handle(() => {
      turn++
      if (turn === 4) return textReply('r4', 'done')
      return chatStream({ id: `r${turn}`, steps: [call(`c${turn}`, 'read_file', { path: `${turn}.txt` })] })
    })
    await collect(h.createAgent({ tools: [readFile], historyFormatter: counter.wrapped }).run('Read three'))
    // Three responses with one call each: six messages, each converted once.
    expect(counter.total()).toBe(6)
    expect([...counter.byMessage.values()].every((n) => n === 1)).toBe(true)
  })
})
