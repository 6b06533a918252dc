import { describe, expect, test } from 'vitest'
import { clip } from '../../src/display/format.js'

describe('clip', () => {
  test('collapses whitespace and cuts with an ellipsis', () => {
    expect(clip('a  b\n c', 80)).toBe('a b c')
    expect(clip('abcdef', 4)).toBe('abc…')
  })

  test('never keeps half of an emoji at the cut', () => {
    // The emoji's two UTF-16 units straddle the cut at 9: half of it would print as U+FFFD.
    const cut = clip(`${'a'.repeat(8)}😀bbb`, 10)
    expect(cut).toBe(`${'a'.repeat(8)}…`)
    expect(cut).not.toMatch(/\p{Cs}/u)
  })
})
