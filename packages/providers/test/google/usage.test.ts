import { describe, expect, test } from 'vitest'
import { googleUsage } from '../../src/apis/google/events.js'

describe('googleUsage', () => {
  test('metadata without counts (early Gemini chunks) is no usage, not an empty one', () => {
    const metadata = JSON.parse('{"trafficType":"ON_DEMAND"}')
    expect(googleUsage({})).toBeUndefined()
    expect(googleUsage(metadata)).toBeUndefined()
  })

  test('any count makes a usage with only what was counted', () => {
    expect(googleUsage({ cachedContentTokenCount: 3 })).toStrictEqual({ cacheReadTokens: 3 })
    expect(googleUsage({ promptTokenCount: 9, thoughtsTokenCount: 4 })).toStrictEqual({
      inputTokens: 9,
      outputTokens: 4,
      reasoningTokens: 4,
    })
  })
})
