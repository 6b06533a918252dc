import { followStart } from '@kode/session'
import { describe, expect, test } from 'vitest'

// The one rule every store's `follow` checks `from` with (the memory store's and the Postgres
// store's, which reaches it through this package's entry).
describe('followStart', () => {
  test('starts at 0 by default, or at the position given', () => {
    expect(followStart(undefined)).toBe(0)
    expect(followStart(0)).toBe(0)
    expect(followStart(7)).toBe(7)
    expect(followStart(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER)
  })

  test('refuses a position that is not a non-negative safe integer with a TypeError naming it', () => {
    for (const from of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => followStart(from)).toThrow(
        new TypeError(`follow: from must be a non-negative integer, got ${String(from)}`),
      )
    }
  })
})
