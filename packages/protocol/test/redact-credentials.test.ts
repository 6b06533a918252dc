import { redactCredentials } from '@kode/protocol/helpers'
import { describe, expect, test } from 'vitest'

describe('redactCredentials', () => {
  test.each([
    ['Authorization: Bearer sk-live-0123456789abcdef', 'Authorization: Bearer [redacted]'],
    ['proxy-authorization=Basic dXNlcjpwYXNzd29yZDEyMw==', 'proxy-authorization=Basic [redacted]'],
    ['{"x-api-key": "abcdefghijklmnopqrst"}', '{"x-api-key": "[redacted]"}'],
    ['x-goog-api-key=AIzaSyA0123456789abcdefghijklmnopqrstu&alt=sse', 'x-goog-api-key=[redacted]&alt=sse'],
    ['cookie: session=0123456789abcdef', 'cookie: [redacted]'],
    ['sent bearer abcdefghijklmnop1 twice', 'sent bearer [redacted] twice'],
    ['key sk-proj-AbCdEf0123456789AbCdEf0123 refused', 'key [redacted] refused'],
    ['key sk-ant-api03-AbCdEf0123456789AbCdEf refused', 'key [redacted] refused'],
    ['key sk-or-v1-0123456789abcdef0123456789abcdef.', 'key [redacted].'],
    ['(AIzaSyA0123456789abcdefghijklmnopqrstu)', '([redacted])'],
    ['xai-AbCdEf0123456789AbCdEf0123 and gsk_AbCdEf0123456789AbCdEf0123', '[redacted] and [redacted]'],
  ])('%s', (text, redacted) => {
    expect(redactCredentials(text)).toBe(redacted)
  })

  test.each([
    'Authorization: required',
    'the api-key header is missing',
    'install sk-learn-compatible-models first',
    'task-0123456789abcdef0123456789 failed',
    'AIza is too short',
    'a bearer of bad news',
  ])('leaves words alone: %s', (text) => {
    expect(redactCredentials(text)).toBe(text)
  })

  test('a long run of key prefixes without a digit is read once, not once per prefix', () => {
    // Text a tool echoes may be hostile: each `-sk-` once started a scan to the end of the run,
    // so 300,000 characters took minutes. Read once, it takes milliseconds.
    const run = `x${'-sk-'.repeat(75_000)}x`
    expect(redactCredentials(run)).toBe(run)
    expect(redactCredentials(`${run}0`)).toBe('x-[redacted]')
  })
})
