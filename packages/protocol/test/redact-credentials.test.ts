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
    ['Authorization: Bearer supersecrettoken', 'Authorization: Bearer [redacted]'],
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
    'This endpoint requires Basic authentication.',
    'a basic understanding of configuration',
    'Bearer authentication failed',
  ])('leaves words alone: %s', (text) => {
    expect(redactCredentials(text)).toBe(text)
  })

  test.each([
    [
      'fetch https://api.example.com/v1/data?access_token=abcdef0123456789xyz failed',
      'fetch https://api.example.com/v1/data?access_token=[redacted] failed',
    ],
    [
      'GET https://mcp.example.com/sse?session=1&token=abc123 returned 401',
      'GET https://mcp.example.com/sse?session=1&token=[redacted] returned 401',
    ],
    [
      'https://example.com/x?alt=sse&key=0123456789abcdefghij#top',
      'https://example.com/x?alt=sse&key=[redacted]#top',
    ],
    [
      'https://app.example.com/cb#access_token=abc123&token_type=bearer',
      'https://app.example.com/cb#access_token=[redacted]&token_type=bearer',
    ],
    [
      'grant_type=client_credentials&client_secret=s3cr3t',
      'grant_type=client_credentials&client_secret=[redacted]',
    ],
    [
      'connect https://alice:s3cretpassw0rd@proxy.example.com:8080 refused',
      'connect https://[redacted]@proxy.example.com:8080 refused',
    ],
    ['"postgres://kode:hunter2@db.internal/kode"', '"postgres://[redacted]@db.internal/kode"'],
  ])("a URL's credentials and key-named query parameters: %s", (text, redacted) => {
    expect(redactCredentials(text)).toBe(redacted)
  })

  test.each([
    ['{\\"x-api-key\\":\\"abcdef0123456789abcdef\\"}', '{\\"x-api-key\\":\\"[redacted]\\"}'],
    ['OPENAI_API_KEY=abcdef0123456789abcdef0123', 'OPENAI_API_KEY=[redacted]'],
    ["MISTRAL_API_KEY: 'abcdef0123456789abcdef'", "MISTRAL_API_KEY: '[redacted]'"],
    ['GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz', 'GITHUB_TOKEN=[redacted]'],
    [
      '_token=abcdef0123456789abcdef and __SECRET: abcdef0123456789abcdef',
      '_token=[redacted] and __SECRET: [redacted]',
    ],
    ['{"access_token": "abcdef0123456789abcdef"}', '{"access_token": "[redacted]"}'],
    ['{"client_secret":"abcdef0123456789abcdef"}', '{"client_secret":"[redacted]"}'],
    ['password=hunter2hunter2hunter2', 'password=[redacted]'],
  ])(
    'a field named like a credential, escaped in JSON or as an environment variable: %s',
    (text, redacted) => {
      expect(redactCredentials(text)).toBe(redacted)
    },
  )

  test.each([
    'the token is missing',
    'token: expired',
    'Unexpected token < in JSON at position 0',
    'invalid password: too short',
    'the secret_key_base setting',
  ])('leaves prose about credentials alone: %s', (text) => {
    expect(redactCredentials(text)).toBe(text)
  })

  test.each([
    'https://example.com/search?q=monkey&sort=asc',
    'see https://docs.example.com/api#keys for details',
    'mail alice@example.com about https://example.com/path',
  ])('leaves URLs without credentials alone: %s', (text) => {
    expect(redactCredentials(text)).toBe(text)
  })

  test('a long run of what could begin a URL is read once, not once per start', () => {
    // Every `a.` could start a scheme; scanning from each to the end of the run was quadratic.
    const run = `${'a.'.repeat(100_000)}://x`
    expect(redactCredentials(run)).toBe(run)
    expect(redactCredentials(`${run}@y`)).toBe(`${'a.'.repeat(100_000)}://[redacted]@y`)
  })

  test('a long run of key prefixes without a digit is read once, not once per prefix', () => {
    // Text a tool echoes may be hostile: each `-sk-` once started a scan to the end of the run,
    // so 300,000 characters took minutes. Read once, it takes milliseconds.
    const run = `x${'-sk-'.repeat(75_000)}x`
    expect(redactCredentials(run)).toBe(run)
    expect(redactCredentials(`${run}0`)).toBe('x-[redacted]')
  })
})
