import { type Static, Type } from '@sinclair/typebox'

const Count = Type.Integer({ minimum: 0 })

/**
 * Token usage of one model response, one meaning for every provider:
 * `inputTokens` counts every prompt token (cache reads and writes included, they are parts of it);
 * `outputTokens` counts every generated token (reasoning included, `reasoningTokens` is part of it);
 * `totalTokens = inputTokens + outputTokens`. A count the provider did not report is absent, never 0.
 */
export const Usage = Type.Object(
  {
    inputTokens: Type.Optional(Count),
    outputTokens: Type.Optional(Count),
    totalTokens: Type.Optional(Count),
    cacheReadTokens: Type.Optional(Count),
    cacheWriteTokens: Type.Optional(Count),
    reasoningTokens: Type.Optional(Count),
  },
  { $id: 'Usage' },
)
export type Usage = Static<typeof Usage>

/** Catalog prices in USD per million tokens. Cache prices default to the input price when absent. */
export const ModelPrices = Type.Object(
  {
    input: Type.Number({ minimum: 0 }),
    output: Type.Number({ minimum: 0 }),
    cacheRead: Type.Optional(Type.Number({ minimum: 0 })),
    cacheWrite: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { $id: 'ModelPrices' },
)
export type ModelPrices = Static<typeof ModelPrices>

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

/** Sums usages field by field; a field stays absent only if it is absent in every input. */
export function addUsage(a: Usage, b: Usage): Usage {
  const out: Usage = {}
  for (const key of USAGE_KEYS) {
    const x = a[key]
    const y = b[key]
    if (x !== undefined || y !== undefined) out[key] = (x ?? 0) + (y ?? 0)
  }
  return out
}

const USAGE_KEYS = [
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'reasoningTokens',
] as const satisfies readonly (keyof Usage)[]
