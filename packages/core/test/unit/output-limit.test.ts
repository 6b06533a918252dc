import { capOutput } from '@kode/core'
import { describe, expect, test } from 'vitest'

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
