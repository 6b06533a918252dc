import type { Usage } from '@kode/protocol'

/**
 * A token count as reported, or `undefined` when the provider sent none (or nonsense: a count
 * beyond `Number.MAX_SAFE_INTEGER` is a bug, and near 1e308 it would add up to `Infinity`): never 0
 * by default.
 */
export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/**
 * Usage from counts a wire reports already in Kode's convention (input inclusive of cache, output
 * of reasoning), each absent when not reported.
 */
export function usageOf(
  input: unknown,
  output: unknown,
  cacheRead: unknown,
  cacheWrite: unknown,
  reasoning: unknown,
): Usage {
  const out: Usage = {}
  const counts = [
    ['inputTokens', input],
    ['outputTokens', output],
    ['cacheReadTokens', cacheRead],
    ['cacheWriteTokens', cacheWrite],
    ['reasoningTokens', reasoning],
  ] as const
  for (const [key, value] of counts) {
    const n = count(value)
    if (n !== undefined) out[key] = n
  }
  return out
}

/**
 * The completion count in Kode's convention (reasoning included). Most servers include reasoning
 * in their completion count (`total = prompt + completion`); some (xAI) leave it out and add it to
 * the total only (`total = prompt + completion + reasoning`). The numbers say which: when the
 * total is exactly the exclusive sum, reasoning is added. Without a total the inclusive
 * convention is assumed.
 */
export function inclusiveOutput(
  input: unknown,
  output: unknown,
  reasoning: unknown,
  total: unknown,
): unknown {
  const [i, o, r, t] = [count(input), count(output), count(reasoning), count(total)]
  if (i === undefined || o === undefined || r === undefined || r === 0 || t === undefined) return output
  return t === i + o + r ? o + r : output
}
