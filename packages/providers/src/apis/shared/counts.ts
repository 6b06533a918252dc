import type { Usage } from '@kode/protocol'

/** A token count as reported, or `undefined` when the provider sent none (or nonsense): never 0 by default. */
export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined
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
