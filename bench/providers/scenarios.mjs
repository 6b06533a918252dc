// The two streams every client consumes, and what a client must end up with after each.
// Deterministic (no randomness), so every run and every wire carries the same content.

/** Deltas in the text scenario. */
export const TEXT_DELTAS = 20_000
/** Argument fragments in the tool-call scenario. */
export const TOOL_FRAGMENTS = 2_000
/** The one tool the tool-call scenario calls; clients declare it so SDKs accept the call. */
export const TOOL = {
  name: 'write_file',
  description: 'Writes a file.',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, content: { type: 'string' } },
    required: ['path', 'content'],
    additionalProperties: false,
  },
}
/** Scenario names, as they appear in URLs (`/<scenario>/...`) and in the tables. */
export const SCENARIOS = ['text', 'tool']

// Token-sized pieces with what makes JSON escaping and UTF-8 decoding do real work:
// quotes, backslashes, newlines and multi-byte characters.
const TOKENS = [
  'The',
  ' quick',
  ' brown',
  ' fox',
  ' jumps',
  ' over',
  ' the',
  ' lazy',
  ' dog',
  '.',
  ' Caf',
  'é',
  ' naïve',
  ' —',
  ' “quoted”',
  ' "json"',
  ' back\\slash',
  '\n\n',
  ' stream',
  'ing',
  ' tokens',
  ',',
  ' 42',
  ' `code`',
]

/** The text scenario's deltas, in stream order. */
export function textDeltas(count = TEXT_DELTAS) {
  // A stride coprime with the token count walks every token without a short visible cycle.
  return Array.from({ length: count }, (_, i) => TOKENS[(i * 7) % TOKENS.length])
}

/** The tool-call scenario's arguments: a file of about 20 KB, as an agent writing code sends. */
export function toolArguments() {
  let content = ''
  for (let i = 0; content.length < 20_000; i++) {
    content += `export const item${i} = { label: "Café №${i}", path: 'src\\\\x${i}', done: ${i % 2 === 0} }\n`
  }
  return { path: 'src/generated/items.ts', content }
}

/** Splits `text` into `count` consecutive pieces of near-equal length. */
export function splitEvenly(text, count) {
  const pieces = []
  for (let k = 0; k < count; k++) {
    pieces.push(
      text.slice(Math.floor((k * text.length) / count), Math.floor(((k + 1) * text.length) / count)),
    )
  }
  return pieces
}

/**
 * What a client must have received at the end of `scenario`: the full text, the tool calls with
 * their arguments parsed, and how many non-empty deltas carried them.
 */
export function expectedResult(scenario) {
  switch (scenario) {
    case 'text':
      return { text: textDeltas().join(''), toolCalls: [], deltas: TEXT_DELTAS }
    case 'tool':
      return { text: '', toolCalls: [{ name: TOOL.name, args: toolArguments() }], deltas: TOOL_FRAGMENTS }
    default:
      throw new Error(`unknown scenario ${scenario}`)
  }
}
