// History formatter benchmark: what building the next request's messages costs per turn in a
// 1,000-turn session, at turn 10 and at turn 1,000, for each built-in formatter. The engine keeps
// one incremental view per session (createProviderView), so each turn formats only the messages
// that are new; the uncached figures build the view from scratch at that turn instead, which is
// what formatting the whole history every turn would cost.
//
// The session is synthetic and in memory (no model, no store): one user message, then 1,000
// turns of an assistant message (its text and the call appended to it, as the engine persists
// it) and a 1 KB tool result: ReAct turns (`Action: lookup`), or CodeAct turns (a python block
// and its code_execution call) for the CodeAct variant. Each view gets the instructions its
// formatter gives for the agent's tools, as the engine does.
// Run: pnpm build && node bench/formatters.mjs
import {
  CODE_EXECUTION_TOOL,
  CodeExecutionParameters,
  codeActFormatter,
  createProviderView,
  nativeFormatter,
  ProviderView,
  reactFormatter,
} from '../packages/core/dist/index.js'
import { median, printTable } from './lib/report.mjs'

const TURNS = 1000
const WARMUP = 3
const ROUNDS = 15
const OUTPUT = 'a line of the tool output, as long as a typical one\n'.repeat(20)
/** The turns each figure is the median over: around turn 10 and the last ten. */
const EARLY = range(6, 15)
const LATE = range(TURNS - 9, TURNS)

/** The agent's tools as the formatters see them: the looked-up tool, or the code tool. */
const LOOKUP = { name: 'lookup', description: 'Looks a topic up', parameters: { type: 'object' } }
const CODE = { name: CODE_EXECUTION_TOOL, description: 'Runs Python 3.', parameters: CodeExecutionParameters }

const variants = [
  { name: 'ProviderView alone (no formatter)', view: () => new ProviderView(), shape: 'react' },
  { name: 'native', formatter: nativeFormatter, tools: [LOOKUP], shape: 'react' },
  {
    name: "react (history: 'tool_calls')",
    formatter: () => reactFormatter({ history: 'tool_calls' }),
    tools: [LOOKUP],
    shape: 'react',
  },
  { name: 'react (default: text)', formatter: () => reactFormatter(), tools: [LOOKUP], shape: 'react' },
  { name: 'codeact (default: text)', formatter: () => codeActFormatter(), tools: [CODE], shape: 'codeact' },
]

const sessions = { react: session('react'), codeact: session('codeact') }
const newViews = variants.map((variant) => () => {
  if (variant.view) return { view: variant.view(), conversions: () => 0 }
  const formatter = variant.formatter()
  const counted = counting(formatter)
  return {
    view: createProviderView(counted.formatter, formatter.instructions(variant.tools)),
    conversions: counted.count,
  }
})
// Rounds run every variant in turn, starting with a different one each round, so the heap's
// growth and the compiler's state weigh on all of them alike.
const cachedRuns = variants.map(() => [])
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  for (let k = 0; k < variants.length; k++) {
    const v = (round + k) % variants.length
    const result = cachedSession(newViews[v], sessions[variants[v].shape])
    if (round >= WARMUP) cachedRuns[v].push(result)
  }
}
const rows = []
let floor
for (const [v, variant] of variants.entries()) {
  const newView = newViews[v]
  const cached = cachedRuns[v]
  const perTurn = (turn) => median(cached.map((r) => r.micros[turn - 1]))
  const uncached = (turns) =>
    median(turns.map((turn) => uncachedTurn(newView, sessions[variant.shape], turn)))
  const early = median(EARLY.map(perTurn))
  const late = median(LATE.map(perTurn))
  // The view's own work (its rules and the new messages array) is the floor's; the rest is formatting.
  floor ??= { early, late }
  rows.push([
    variant.name,
    fixed(early),
    fixed(late),
    variant.view ? 'n/a' : `${fixed(early - floor.early)} / ${fixed(late - floor.late)}`,
    variant.view ? 'n/a' : `${cached[0].conversions[9]} / ${cached[0].conversions[TURNS - 1]}`,
    fixed(uncached(EARLY)),
    fixed(uncached(LATE)),
  ])
}

printTable(
  `building the request messages in a ${TURNS}-turn session, µs per turn (median of ${ROUNDS} rounds, then of turns ${EARLY[0]}-${EARLY.at(-1)} and ${LATE[0]}-${LATE.at(-1)})`,
  [
    [
      'formatter',
      'turn 10',
      'turn 1,000',
      'formatting alone, turn 10 / 1,000',
      'messages formatted, turn 10 / 1,000',
      'uncached, turn 10',
      'uncached, turn 1,000',
    ],
    ...rows,
  ],
)

/** One session grown turn by turn through one view: the µs of each turn's update. */
function cachedSession(newView, { opening, turns }) {
  const { view, conversions } = newView()
  const history = [...opening]
  view.update(history)
  const micros = []
  const converted = []
  for (const records of turns) {
    history.push(...records)
    const before = conversions()
    const start = process.hrtime.bigint()
    view.update(history)
    micros.push(Number(process.hrtime.bigint() - start) / 1000)
    converted.push(conversions() - before)
  }
  return { micros, conversions: converted }
}

/** µs to build the messages at `turn` from nothing, median of ROUNDS fresh views. */
function uncachedTurn(newView, { opening, turns }, turn) {
  const history = [...opening, ...turns.slice(0, turn).flat()]
  const times = []
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const { view } = newView()
    const start = process.hrtime.bigint()
    view.update(history)
    if (round >= WARMUP) times.push(Number(process.hrtime.bigint() - start) / 1000)
  }
  return median(times)
}

/** The formatter with its per-message conversions counted (what the cache saves). */
function counting(formatter) {
  let count = 0
  return {
    count: () => count,
    formatter: {
      ...formatter,
      isAction: (message) => {
        count++
        return formatter.isAction(message)
      },
      formatResult: (result, instructions) => {
        count++
        return formatter.formatResult(result, instructions)
      },
    },
  }
}

/** The synthetic session of `shape` (`react` or `codeact`): the opening records, then each turn's records. */
function session(shape) {
  let n = 0
  const record = () => ({ id: `rec-${++n}`, createdAt: 1_700_000_000_000 + n })
  const opening = [
    { role: 'system', ...record(), parts: [{ type: 'text', text: 'You look things up.' }] },
    {
      role: 'user',
      ...record(),
      parts: [{ type: 'text', text: 'Look up a thousand things, one at a time.' }],
    },
  ]
  const turns = []
  for (let turn = 1; turn <= TURNS; turn++) {
    const base = record()
    const callId = `call_${base.id}_0`
    const thought = `Thought: I have looked up ${turn - 1} topics; the next one is number ${turn}.`
    const code = `print(lookup("topic number ${turn}"))`
    const [text, toolName, args] =
      shape === 'codeact'
        ? [
            `${thought}\n\`\`\`python\n${code}\n\`\`\``,
            CODE_EXECUTION_TOOL,
            JSON.stringify({ code, language: 'python' }),
          ]
        : [
            `${thought}\nAction: lookup\nArgs: ${JSON.stringify({ query: `topic number ${turn}` })}`,
            'lookup',
            JSON.stringify({ query: `topic number ${turn}` }),
          ]
    const assistant = {
      role: 'assistant',
      ...base,
      parts: [
        { type: 'text', text },
        { type: 'tool_call', id: callId, name: toolName, argumentsJson: args },
      ],
      stopReason: 'stop',
    }
    const result = {
      role: 'tool',
      ...record(),
      toolCallId: callId,
      toolName,
      status: 'success',
      outputText: OUTPUT,
      parts: [],
    }
    turns.push([assistant, result])
  }
  return { opening, turns }
}

function range(from, to) {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i)
}

function fixed(micros) {
  return Math.abs(micros) < 10 ? micros.toFixed(2) : micros.toFixed(1)
}
