// Long-session benchmark: one task of 1,000 turns (a tool call each) with compaction on, against a
// model whose window is 8,000 tokens, so the session is compacted again and again. The model is an
// in-process client that answers at once (no HTTP, no SSE): what is measured is the engine's own
// work per turn (budget, view, formatter, persistence, compaction bookkeeping). The figure to read:
// the median cost of a turn near turn 1 against near turn 1,000 should be about the same.
// It prints figures only; nothing is asserted.
// Run: pnpm build && node bench/compaction.mjs

import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { createAgent, defineTool } from '../packages/core/dist/index.js'
import { createMemorySessionStore } from '../packages/session/dist/index.js'
import { median, printTable } from './lib/report.mjs'

const { Type } = createRequire(new URL('../packages/core/package.json', import.meta.url))('@sinclair/typebox')

const TURNS = 1_000
const WINDOW = 8_000
const OUTPUT = 'result line of the lookup tool\n'.repeat(8)

let ids = 0
const createId = () => `id-${++ids}`

/** A client that answers every request at once: a tool call until TURNS, then a text; summaries are short. */
function instantClient() {
  let turn = 0
  const message = (parts, request) => ({
    role: 'assistant',
    id: createId(),
    createdAt: Date.now(),
    parts,
    stopReason: parts.some((p) => p.type === 'tool_call') ? 'tool_use' : 'stop',
    // What a provider would report: the request's size, counted the way the estimate counts.
    usage: { inputTokens: Math.ceil(JSON.stringify(request.messages).length / 4), outputTokens: 20 },
  })
  const respond = (request) => {
    if (request.system?.startsWith('You are summarising'))
      return message([{ type: 'text', text: 'Summary: the lookups so far.' }], request)
    turn++
    if (turn > TURNS) return message([{ type: 'text', text: 'done' }], request)
    return message(
      [{ type: 'tool_call', id: `call-${turn}`, name: 'lookup', argumentsJson: `{"n":${turn}}` }],
      request,
    )
  }
  return {
    api: 'instant',
    provider: 'instant',
    model: 'instant-8k',
    modelInfo: { contextWindow: WINDOW, maxOutputTokens: 1_000 },
    async *stream(request) {
      yield { type: 'done', message: respond(request) }
    },
    async complete(request) {
      return respond(request)
    },
  }
}

const stamps = []
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks something up',
  parameters: Type.Object({ n: Type.Integer() }),
  execute: ({ n }) => {
    stamps[n] = performance.now()
    return OUTPUT
  },
})

const agent = createAgent({
  client: instantClient(),
  store: createMemorySessionStore(),
  tools: [lookup],
  maxTurns: TURNS + 10,
  createId,
})
let compactions = 0
agent.events.on('compaction_end', (event) => {
  if (event.compacted) compactions++
})
const started = performance.now()
const outcome = await agent.run('Look everything up').done
const total = performance.now() - started
if (outcome.reason !== 'completed')
  throw new Error(`the task ended ${outcome.reason}: ${outcome.errorMessage}`)

// The cost of turn n: from turn n-1's tool execution to turn n's (model call, persistence, view, budget).
const cost = (from, to) => {
  const values = []
  for (let n = Math.max(2, from); n <= to; n++) values.push(stamps[n] - stamps[n - 1])
  return median(values)
}
const rows = [['turns', 'median ms per turn']]
for (const [from, to] of [
  [1, 50],
  [101, 150],
  [451, 500],
  [951, 1000],
])
  rows.push([`${from}-${to}`, cost(from, to).toFixed(3)])
printTable(`Engine cost per turn, ${TURNS} turns, window ${WINDOW} tokens, ${compactions} compactions`, rows)
console.log(`\nWhole task: ${total.toFixed(0)} ms; history: ${(await agent.history()).length} records`)
