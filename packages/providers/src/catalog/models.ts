import type { FixedTemperature, ModelInfo, ReasoningControl } from '../types.js'

/**
 * Built-in catalog, by wire api and model id: context window, max output, and USD prices per
 * million tokens (input, output, cache read, cache write). Exact ids only (dated ids are listed
 * next to their aliases); capabilities are never guessed from name fragments. Hosts extend or
 * override entries with `ClientConfig.catalog`. Prices as published by each provider in 2025.
 */
type Row = readonly [
  ids: readonly string[],
  contextWindow: number,
  maxOutputTokens: number,
  prices: readonly [input: number, output: number, cacheRead?: number, cacheWrite?: number] | undefined,
  flags?: {
    reasoning?: boolean
    images?: boolean
    /** Images in tool results go inside the result (see `ModelInfo.imagesInToolResults`). */
    toolImages?: boolean
    control?: ReasoningControl
    temperature?: FixedTemperature
  },
]

// OpenAI's reasoning models refuse any temperature but the default, gpt-5.1 only while it reasons
// (its default effort is none).
const OPENAI: readonly Row[] = [
  [
    ['gpt-5', 'gpt-5-2025-08-07'],
    400_000,
    128_000,
    [1.25, 10, 0.125],
    { reasoning: true, images: true, temperature: 'always' },
  ],
  [
    ['gpt-5-mini', 'gpt-5-mini-2025-08-07'],
    400_000,
    128_000,
    [0.25, 2, 0.025],
    { reasoning: true, images: true, temperature: 'always' },
  ],
  [
    ['gpt-5-nano', 'gpt-5-nano-2025-08-07'],
    400_000,
    128_000,
    [0.05, 0.4, 0.005],
    { reasoning: true, images: true, temperature: 'always' },
  ],
  [
    ['gpt-5.1', 'gpt-5.1-2025-11-13'],
    400_000,
    128_000,
    [1.25, 10, 0.125],
    { reasoning: true, images: true, temperature: 'whileReasoning' },
  ],
  [
    ['gpt-5.1-codex', 'gpt-5-codex'],
    400_000,
    128_000,
    [1.25, 10, 0.125],
    { reasoning: true, images: true, temperature: 'always' },
  ],
  [['gpt-4.1', 'gpt-4.1-2025-04-14'], 1_047_576, 32_768, [2, 8, 0.5], { images: true }],
  [['gpt-4.1-mini', 'gpt-4.1-mini-2025-04-14'], 1_047_576, 32_768, [0.4, 1.6, 0.1], { images: true }],
  [['gpt-4.1-nano', 'gpt-4.1-nano-2025-04-14'], 1_047_576, 32_768, [0.1, 0.4, 0.025], { images: true }],
  [['gpt-4o', 'gpt-4o-2024-08-06', 'gpt-4o-2024-11-20'], 128_000, 16_384, [2.5, 10, 1.25], { images: true }],
  [['gpt-4o-mini', 'gpt-4o-mini-2024-07-18'], 128_000, 16_384, [0.15, 0.6, 0.075], { images: true }],
  [
    ['o3', 'o3-2025-04-16'],
    200_000,
    100_000,
    [2, 8, 0.5],
    { reasoning: true, images: true, temperature: 'always' },
  ],
  [
    ['o4-mini', 'o4-mini-2025-04-16'],
    200_000,
    100_000,
    [1.1, 4.4, 0.275],
    { reasoning: true, images: true, temperature: 'always' },
  ],
  [
    ['o3-mini', 'o3-mini-2025-01-31'],
    200_000,
    100_000,
    [1.1, 4.4, 0.55],
    { reasoning: true, temperature: 'always' },
  ],
  // OpenAI-compatible hosts most often used through openai-chat.
  [['deepseek-chat'], 128_000, 8_192, [0.28, 0.42, 0.028]],
  [['deepseek-reasoner'], 128_000, 65_536, [0.28, 0.42, 0.028], { reasoning: true }],
  [['llama-3.3-70b-versatile'], 131_072, 32_768, [0.59, 0.79]],
]

const ANTHROPIC: readonly Row[] = [
  [
    ['claude-opus-4-5', 'claude-opus-4-5-20251101'],
    200_000,
    64_000,
    [5, 25, 0.5, 6.25],
    { reasoning: true, images: true },
  ],
  [
    ['claude-opus-4-1', 'claude-opus-4-1-20250805'],
    200_000,
    32_000,
    [15, 75, 1.5, 18.75],
    { reasoning: true, images: true },
  ],
  [
    ['claude-opus-4-0', 'claude-opus-4-20250514'],
    200_000,
    32_000,
    [15, 75, 1.5, 18.75],
    { reasoning: true, images: true },
  ],
  [
    ['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929'],
    200_000,
    64_000,
    [3, 15, 0.3, 3.75],
    { reasoning: true, images: true },
  ],
  [
    ['claude-sonnet-4-0', 'claude-sonnet-4-20250514'],
    200_000,
    64_000,
    [3, 15, 0.3, 3.75],
    { reasoning: true, images: true },
  ],
  [
    ['claude-3-7-sonnet-latest', 'claude-3-7-sonnet-20250219'],
    200_000,
    64_000,
    [3, 15, 0.3, 3.75],
    { reasoning: true, images: true },
  ],
  [
    ['claude-haiku-4-5', 'claude-haiku-4-5-20251001'],
    200_000,
    64_000,
    [1, 5, 0.1, 1.25],
    { reasoning: true, images: true },
  ],
  [
    ['claude-3-5-haiku-latest', 'claude-3-5-haiku-20241022'],
    200_000,
    8_192,
    [0.8, 4, 0.08, 1],
    { images: true },
  ],
  [['claude-3-haiku-20240307'], 200_000, 4_096, [0.25, 1.25, 0.03, 0.3], { images: true }],
]

// Gemini prices are those of prompts up to 200k tokens (longer prompts cost more). Gemini 3 sizes
// reasoning by `thinkingLevel` (Pro: low and high; Flash: all four), Gemini 2.5 by a
// `thinkingBudget` in a per-model range, and each rejects the other's field with a 400. Gemini 3
// takes a function's images inside its `functionResponse` ("multimodal function responses");
// earlier models answer that with a 400.
const GEMINI_3_PRO: ReasoningControl = { type: 'levels', levels: ['low', 'high'] }
const GEMINI_3_FLASH: ReasoningControl = { type: 'levels', levels: ['minimal', 'low', 'medium', 'high'] }
const GOOGLE: readonly Row[] = [
  [
    ['gemini-3-pro-preview'],
    1_048_576,
    65_536,
    [2, 12, 0.2],
    { reasoning: true, images: true, toolImages: true, control: GEMINI_3_PRO },
  ],
  [
    ['gemini-3-flash-preview'],
    1_048_576,
    65_536,
    [0.5, 3, 0.05],
    { reasoning: true, images: true, toolImages: true, control: GEMINI_3_FLASH },
  ],
  [
    ['gemini-2.5-pro'],
    1_048_576,
    65_536,
    [1.25, 10, 0.125],
    { reasoning: true, images: true, control: { type: 'budget', min: 128, max: 32_768 } },
  ],
  [
    ['gemini-2.5-flash'],
    1_048_576,
    65_536,
    [0.3, 2.5, 0.03],
    { reasoning: true, images: true, control: { type: 'budget', min: 0, max: 24_576 } },
  ],
  [
    ['gemini-2.5-flash-lite'],
    1_048_576,
    65_536,
    [0.1, 0.4, 0.01],
    { reasoning: true, images: true, control: { type: 'budget', min: 512, max: 24_576 } },
  ],
  [['gemini-2.0-flash'], 1_048_576, 8_192, [0.1, 0.4, 0.025], { images: true }],
]

// OpenRouter reports each response's cost itself, so its entries carry limits only.
const OPENROUTER: readonly Row[] = [
  [['anthropic/claude-sonnet-4.5'], 1_000_000, 64_000, undefined, { reasoning: true, images: true }],
  [['anthropic/claude-opus-4.5'], 200_000, 64_000, undefined, { reasoning: true, images: true }],
  [['anthropic/claude-haiku-4.5'], 200_000, 64_000, undefined, { reasoning: true, images: true }],
  [['openai/gpt-5'], 400_000, 128_000, undefined, { reasoning: true, images: true }],
  [['openai/gpt-5-mini'], 400_000, 128_000, undefined, { reasoning: true, images: true }],
  [['openai/gpt-4.1'], 1_047_576, 32_768, undefined, { images: true }],
  [['openai/gpt-4o-mini'], 128_000, 16_384, undefined, { images: true }],
  [['google/gemini-2.5-pro'], 1_048_576, 65_536, undefined, { reasoning: true, images: true }],
  [['google/gemini-2.5-flash'], 1_048_576, 65_535, undefined, { reasoning: true, images: true }],
  [['deepseek/deepseek-chat-v3.1'], 163_840, 163_840, undefined, { reasoning: true }],
]

/** The built-in tables by api; `openrouter` and `openai-chat` are separate namespaces of ids. */
export const BUILTIN_ROWS: Readonly<Record<string, readonly Row[]>> = {
  'openai-chat': OPENAI,
  'openai-responses': OPENAI,
  anthropic: ANTHROPIC,
  google: GOOGLE,
  openrouter: OPENROUTER,
}

/** One row as a {@link ModelInfo}. */
export function rowInfo(row: Row): ModelInfo {
  const [, contextWindow, maxOutputTokens, prices, flags] = row
  const info: ModelInfo = { contextWindow, maxOutputTokens }
  if (prices) {
    const [input, output, cacheRead, cacheWrite] = prices
    info.prices = { input, output }
    if (cacheRead !== undefined) info.prices.cacheRead = cacheRead
    if (cacheWrite !== undefined) info.prices.cacheWrite = cacheWrite
  }
  if (flags?.reasoning) info.reasoning = true
  if (flags?.images) info.images = true
  if (flags?.toolImages) info.imagesInToolResults = true
  if (flags?.control) info.reasoningControl = flags.control
  if (flags?.temperature) info.fixedTemperature = flags.temperature
  return info
}
