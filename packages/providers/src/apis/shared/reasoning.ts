import type { ReasoningEffort } from '../../types.js'

/** Thinking budgets in tokens per effort level, for wires that size reasoning by a budget. */
export const EFFORT_BUDGET_TOKENS: Readonly<Record<ReasoningEffort, number>> = {
  minimal: 1_024,
  low: 4_096,
  medium: 10_000,
  high: 32_000,
}

const EFFORTS: readonly ReasoningEffort[] = ['minimal', 'low', 'medium', 'high']

/**
 * The level to send for `effort` to a model that accepts only `levels`: the effort itself, else
 * the next level up (at least the reasoning asked for), else the highest it has.
 */
export function nearestLevel(effort: ReasoningEffort, levels: readonly ReasoningEffort[]): ReasoningEffort {
  if (levels.includes(effort)) return effort
  const rank = EFFORTS.indexOf(effort)
  const above = EFFORTS.slice(rank + 1).find((level) => levels.includes(level))
  return above ?? EFFORTS.filter((level) => levels.includes(level)).at(-1) ?? effort
}
