import { allKeys, FINAL_TEXT, TURNS } from './task.mjs'

/**
 * What is wrong with a finished task, or undefined when it is right: every scripted tool call ran
 * exactly once (`ran` lists the call keys the tools recorded), the model was called once per turn,
 * and the final text is the scripted answer. The server answers a history it does not expect with
 * a text of its own, so a client that lost or garbled any turn fails the final-text check.
 */
export function mismatch(result, ran, modelCalls) {
  const counts = new Map()
  for (const key of ran) counts.set(key, (counts.get(key) ?? 0) + 1)
  const keys = allKeys()
  const missing = keys.filter((key) => !counts.has(key))
  if (missing.length > 0) return `${missing.length} tool calls never ran (first ${missing[0]})`
  const twice = [...counts].filter(([, n]) => n > 1)
  if (twice.length > 0) return `${twice.length} tool calls ran more than once (first ${twice[0][0]})`
  if (counts.size !== keys.length) return `${counts.size - keys.length} unexpected tool calls`
  if (result.finalText !== FINAL_TEXT) {
    return `final text: ${JSON.stringify(String(result.finalText).slice(0, 120))}`
  }
  if (modelCalls !== TURNS) return `${modelCalls} model calls, expected ${TURNS}`
  return undefined
}
