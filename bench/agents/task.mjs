// The scripted task every agent loop runs: what the model says each turn, which tools it calls,
// what those tools return and what the final answer is. The server (server.mjs) plays the model
// from these; each client's tools compute their results with `runTool`; the worker checks the
// outcome against them.

/** Model calls in one task: turns 1..TURNS - 1 call tools, the last one answers. */
export const TURNS = 50
/** Tool calls per tool-calling turn, all in one response (parallel calls). */
export const CALLS_PER_TURN = 3
/** Text deltas streamed at the start of every response. */
export const TEXT_DELTAS = 120
/** Fragments each call's argument JSON arrives in. */
export const ARGUMENT_FRAGMENTS = 4

export const SYSTEM = 'You look things up and check files. Call tools in parallel when you can.'
export const PROMPT = 'Survey the fifty topics, three lookups per step, then sum it up.'

const WORDS = 'the agent turns each delta into an event and runs every tool call before it asks again'.split(
  ' ',
)
const FILLER = 'a line of what the tool found, long enough to make the history grow.\n'.repeat(16)

/** The two tools, as JSON Schema (each client declares them in its own library's way). */
export const TOOLS = [
  {
    name: 'lookup',
    description: 'Looks a topic up and returns what it found',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
  {
    name: 'stat',
    description: 'Returns facts about a file',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
  },
]

/** The text deltas of turn `turn` (1-based). */
export function textDeltas(turn) {
  return Array.from({ length: TEXT_DELTAS }, (_, i) => `${WORDS[(i + turn) % WORDS.length]} `)
}

/** The final answer: the whole text of the last turn. */
export const FINAL_TEXT = textDeltas(TURNS).join('')

/** The calls the model makes in `turn`: id, tool name and arguments. */
export function callsOf(turn) {
  if (turn >= TURNS) return []
  return Array.from({ length: CALLS_PER_TURN }, (_, j) => {
    const id = `call_${turn}_${j}`
    // The key is unique across the task, so the worker can tell that every call ran exactly once.
    const key = `t${turn}c${j}`
    return j === CALLS_PER_TURN - 1
      ? { id, name: 'stat', args: { path: `/notes/${key}.md` } }
      : { id, name: 'lookup', args: { query: `${key}: topic ${turn * CALLS_PER_TURN + j} in depth` } }
  })
}

/** The key a call's arguments carry (`t3c1`), which the tools record. */
export function keyOf(args) {
  return (args.query ?? args.path).match(/t\d+c\d+/)?.[0]
}

/** What a tool returns for `args`: the text the model reads. */
export function runTool(name, args) {
  if (name === 'lookup') return `found for ${args.query}:\n${FILLER}`
  if (name === 'stat') return `${args.path}: 2048 bytes, modified at turn ${keyOf(args)}`
  throw new Error(`no tool ${name}`)
}

/** Every call key of the task, in order. */
export function allKeys() {
  const keys = []
  for (let turn = 1; turn < TURNS; turn++) for (const call of callsOf(turn)) keys.push(keyOf(call.args))
  return keys
}
