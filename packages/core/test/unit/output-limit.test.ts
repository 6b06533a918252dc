import { capOutput } from '@kode/core'
import { describe, expect, test, vi } from 'vitest'

describe('capOutput', () => {
  test('text within the limit is returned as it is', () => {
    expect(capOutput('short', 5)).toBe('short')
  })

  test('longer text keeps head and tail around a marker saying how much was cut', () => {
    const text = `${'a'.repeat(500)}${'b'.repeat(500)}`
    const capped = capOutput(text, 200)
    const marker = capped.match(/\n\n\[… (\d+) characters cut from the middle of this output …\]\n\n/)!
    const [head, tail] = capped.split(marker[0])
    expect(head).toMatch(/^a+$/)
    expect(tail).toMatch(/^b+$/)
    expect(head!.length + tail!.length + Number(marker[1])).toBe(1_000)
    expect(capped.length).toBeLessThanOrEqual(200)
  })

  test('never splits a surrogate pair', () => {
    const text = '😀'.repeat(300)
    const capped = capOutput(text, 150)
    expect(capped).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/)
  })

  test('never splits what shows as one character: a flag, a family emoji, a letter and its accent', () => {
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' })
    const whole = (text: string, grapheme: string) =>
      [...segmenter.segment(text)].every((piece) => piece.segment === grapheme)
    for (const grapheme of ['🇫🇷', '👨‍👩‍👧‍👦', 'e\u0301']) {
      for (const limit of [150, 151, 152, 153, 154, 155, 160]) {
        const capped = capOutput(grapheme.repeat(300), limit)
        const marker = capped.match(/\n\n\[… (\d+) characters cut from the middle of this output …\]\n\n/)!
        const [head, tail] = capped.split(marker[0])
        expect(whole(head!, grapheme) && whole(tail!, grapheme)).toBe(true)
        expect(head!.length + tail!.length + Number(marker[1])).toBe(grapheme.length * 300)
        expect(capped.length).toBeLessThanOrEqual(limit)
      }
    }
  })

  test('a large output is cut without segmenting it whole', () => {
    // Segmenting 10 MB of text takes seconds; the cut reads only around its two points. Counted by
    // the characters the segmenter is given, not by time.
    const text = `${'👍🏽'.repeat(1_000_000)}${'x'.repeat(6_000_000)}`
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment')
    let segmented = 0
    try {
      capOutput(text, 30_000)
      segmented = segment.mock.calls.reduce((sum, [input]) => sum + input.length, 0)
    } finally {
      segment.mockRestore()
    }
    expect(segmented).toBeGreaterThan(0)
    expect(segmented).toBeLessThan(1_000)
  })

  test('a limit too small for the marker still holds: the head alone, marked with …', () => {
    for (const limit of [1, 10, 40]) {
      const capped = capOutput('x'.repeat(1_000), limit)
      expect(capped.length).toBeLessThanOrEqual(limit)
      expect(capped).toBe(`${'x'.repeat(limit - 1)}…`)
    }
  })

  test('Infinity disables the cap', () => {
    const text = 'x'.repeat(100_000)
    expect(capOutput(text, Number.POSITIVE_INFINITY)).toBe(text)
  })
})
