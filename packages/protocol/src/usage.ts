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
