import { resolveRetryPolicy, retryAllowed, retryDelayMs } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { parseRetryAfter, sleep } from '../../src/transport/retry.js'

const policy = resolveRetryPolicy({ baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 5_000 })

describe('retryDelayMs', () => {
  test('doubles per retry, between half and all of the ceiling', () => {
    expect(retryDelayMs(1, undefined, policy, () => 0)).toBe(50)
    expect(retryDelayMs(1, undefined, policy, () => 1)).toBe(100)
    expect(retryDelayMs(3, undefined, policy, () => 1)).toBe(400)
  })

  test('never exceeds maxDelayMs', () => {
    expect(retryDelayMs(20, undefined, policy, () => 1)).toBe(1_000)
  })

  test('honours the provider-requested delay, capped by maxRetryAfterMs', () => {
    expect(retryDelayMs(1, 1_234, policy)).toBe(1_234)
    expect(retryDelayMs(1, 60_000, policy)).toBe(5_000)
  })
})

test('retryAllowed stops at maxAttempts and at the time budget', () => {
  const p = resolveRetryPolicy({ maxAttempts: 3, budgetMs: 1_000 })
  expect(retryAllowed(1, 0, 10, p)).toBe(true)
  expect(retryAllowed(3, 0, 10, p)).toBe(false)
  expect(retryAllowed(1, 995, 10, p)).toBe(false)
})

test('resolveRetryPolicy ignores undefined fields', () => {
  expect(resolveRetryPolicy({ maxAttempts: undefined }).maxAttempts).toBe(4)
})

describe('parseRetryAfter', () => {
  const headers = (init: Record<string, string>) => new Headers(init)

  test('prefers retry-after-ms', () => {
    expect(parseRetryAfter(headers({ 'retry-after-ms': '250.5', 'retry-after': '9' }), 0)).toBe(250.5)
  })

  test('reads seconds', () => {
    expect(parseRetryAfter(headers({ 'retry-after': '3' }), 0)).toBe(3_000)
  })

  test('reads an HTTP date against the clock', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')
    expect(parseRetryAfter(headers({ 'retry-after': 'Wed, 21 Oct 2015 07:28:05 GMT' }), now)).toBe(5_000)
  })

  test('is undefined when absent or unreadable', () => {
    expect(parseRetryAfter(headers({}), 0)).toBeUndefined()
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }), 0)).toBeUndefined()
  })

  test('is undefined for garbage that Date.parse would still read as a date, and for negative seconds', () => {
    // V8 reads `garbage 12` as December 2001: a delay of 0, a retry with no backoff at all.
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')
    for (const value of ['garbage 12', 'abc 1', 'later 2', '1, 2', '-5', '0x10'])
      expect(parseRetryAfter(headers({ 'retry-after': value }), now), value).toBeUndefined()
  })

  test('reads the three HTTP date forms', () => {
    const now = Date.parse('Sun, 06 Nov 1994 08:49:30 GMT')
    for (const value of [
      'Sun, 06 Nov 1994 08:49:37 GMT',
      'Sunday, 06-Nov-94 08:49:37 GMT',
      'Sun Nov  6 08:49:37 1994',
    ])
      expect(parseRetryAfter(headers({ 'retry-after': value }), now), value).toBe(7_000)
  })
})

test('sleep rejects with the abort reason', async () => {
  const controller = new AbortController()
  const pending = sleep(60_000, controller.signal)
  controller.abort(new Error('stop'))
  await expect(pending).rejects.toThrow('stop')
})
