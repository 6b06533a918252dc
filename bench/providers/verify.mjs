import { isDeepStrictEqual } from 'node:util'
import { expectedResult } from './scenarios.mjs'

/**
 * Checks what a client received against what `scenario` sent. Returns undefined when it matches,
 * else what differs: a client that loses content is wrong, not fast.
 */
export function mismatch(scenario, result) {
  const expected = expectedResult(scenario)
  if (result.text !== expected.text) {
    let at = 0
    while (at < result.text.length && result.text[at] === expected.text[at]) at++
    return `text: ${result.text.length} chars, expected ${expected.text.length} (first difference at ${at})`
  }
  if (result.toolCalls.length !== expected.toolCalls.length) {
    return `${result.toolCalls.length} tool calls, expected ${expected.toolCalls.length}`
  }
  for (const [i, call] of result.toolCalls.entries()) {
    const want = expected.toolCalls[i]
    if (call.name !== want.name) return `tool call ${i}: name ${call.name}, expected ${want.name}`
    if (!isDeepStrictEqual(call.args, want.args)) {
      return `tool call ${i}: arguments differ (${JSON.stringify(call.args).length} chars of JSON, expected ${JSON.stringify(want.args).length})`
    }
  }
  if (result.deltas !== undefined && result.deltas !== expected.deltas) {
    return `${result.deltas} deltas, expected ${expected.deltas}`
  }
  return undefined
}
