import type { ModelPrices, Usage } from './usage.js'

// Kept apart from the schemas in usage.ts so that the helpers entry loads without TypeBox.

/**
 * Cost in USD of one response. Cache reads and writes are priced separately and taken out of the
 * inclusive `inputTokens`. Returns `undefined` when neither input nor output was reported.
 */
export function computeCostUsd(usage: Usage, prices: ModelPrices): number | undefined {
  if (usage.inputTokens === undefined && usage.outputTokens === undefined) return undefined
  const cacheRead = usage.cacheReadTokens ?? 0
  const cacheWrite = usage.cacheWriteTokens ?? 0
  const freshInput = Math.max(0, (usage.inputTokens ?? 0) - cacheRead - cacheWrite)
  const micro =
    freshInput * prices.input +
    cacheRead * (prices.cacheRead ?? prices.input) +
    cacheWrite * (prices.cacheWrite ?? prices.input) +
    (usage.outputTokens ?? 0) * prices.output
  return micro / 1_000_000
}

/**
 * Sums usages field by field; a field stays absent only if it is absent in every input. A usage
 * without `totalTokens` (a response cut before its output has input only) adds its input and
 * output to the total, so the sum keeps `totalTokens = inputTokens + outputTokens`. Each sum
 * saturates at `Number.MAX_SAFE_INTEGER`, so absurd counts never sum to `Infinity`.
 */
export function addUsage(a: Usage, b: Usage): Usage {
  const out: Usage = {}
  for (const key of USAGE_KEYS) {
    const x = a[key]
    const y = b[key]
    if (x === undefined && y === undefined) continue
    const sum =
      key === 'totalTokens' ? (x ?? unreportedTotal(a)) + (y ?? unreportedTotal(b)) : (x ?? 0) + (y ?? 0)
    // The schema takes any integer count, so a history may hold absurd ones (near 1e308): summed,
    // they would be Infinity, which no record can hold. No real count comes near the cap.
    out[key] = Math.min(sum, Number.MAX_SAFE_INTEGER)
  }
  return out
}

/** The total a usage that reported none stands for: its input and output, each 0 when absent. */
function unreportedTotal(usage: Usage): number {
  return (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)
}

/** The counts a `Usage` may hold, as its schema lists them (without loading the schema). */
export const USAGE_KEYS = [
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'reasoningTokens',
] as const satisfies readonly (keyof Usage)[]
