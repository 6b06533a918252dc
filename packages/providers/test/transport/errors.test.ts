import { ProviderError } from '@kode/providers'
import { errorFromPayload } from '@kode/providers/adapter'
import { describe, expect, test } from 'vitest'
import { redact } from '../../src/transport/errors.js'
import { errorFromResponse, errorFromThrown } from '../../src/transport/failures.js'

const ctx = { label: 'acme', apiKey: 'sk-test-0123456789abcdef', now: () => 0 }

describe('ProviderError', () => {
  test('is recognised across package copies by its Symbol.for marker', () => {
    const foreign = Object.assign(new Error('x'), { [Symbol.for('kode.ProviderError')]: true })
    expect(ProviderError.is(foreign)).toBe(true)
    expect(ProviderError.is(new Error('x'))).toBe(false)
    expect(ProviderError.is(null)).toBe(false)
  })

  test('keeps its cause', () => {
    const cause = new Error('socket hang up')
    expect(new ProviderError('boom', { retryable: true, cause }).cause).toBe(cause)
  })
})

describe('errorFromResponse', () => {
  test('reads the OpenAI error shape, request id and status', async () => {
    const response = new Response(
      JSON.stringify({
        error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' },
      }),
      { status: 429, headers: { 'x-request-id': 'req_1', 'retry-after': '2' } },
    )
    const error = await errorFromResponse(response, ctx)
    expect(error).toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
      retryable: true,
      providerMessage: 'Rate limit reached',
      requestId: 'req_1',
      retryAfterMs: 2000,
    })
    expect(error.message).toBe('acme responded 429 rate_limit_exceeded: Rate limit reached [request req_1]')
  })

  test('reads the Anthropic error shape', async () => {
    const body = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }
    const error = await errorFromResponse(new Response(JSON.stringify(body), { status: 529 }), ctx)
    expect(error).toMatchObject({ status: 529, code: 'overloaded_error', retryable: true })
  })

  test('a 401 is not retryable and says to check the key, without ever quoting it', async () => {
    const body = { error: { message: `Incorrect API key provided: ${ctx.apiKey}`, code: 'invalid_api_key' } }
    const error = await errorFromResponse(new Response(JSON.stringify(body), { status: 401 }), ctx)
    expect(error.retryable).toBe(false)
    expect(error.message).toContain('Check the API key.')
    expect(error.message).not.toContain(ctx.apiKey)
    expect(error.providerMessage).toBe('Incorrect API key provided: [redacted]')
  })

  test('a 401 to a request that sent no key says none was sent', async () => {
    const body = { error: { message: 'Missing bearer authentication in header' } }
    const error = await errorFromResponse(new Response(JSON.stringify(body), { status: 401 }), {
      label: 'acme',
    })
    expect(error.message).toBe(
      'acme responded 401: Missing bearer authentication in header. No API key was sent: pass apiKey to createClient.',
    )
  })

  test('x-should-retry from the provider overrides the status', async () => {
    const headers = { 'x-should-retry': 'false' }
    const error = await errorFromResponse(new Response('busy', { status: 503, headers }), ctx)
    expect(error.retryable).toBe(false)
    expect(error.providerMessage).toBe('busy')
  })

  test('a body that is not JSON becomes the provider message', async () => {
    const error = await errorFromResponse(new Response('<html>Bad gateway</html>', { status: 502 }), ctx)
    expect(error).toMatchObject({ status: 502, retryable: true, providerMessage: '<html>Bad gateway</html>' })
  })
})

describe('errorFromPayload (errors sent inside a stream)', () => {
  test('an Anthropic overloaded error is retryable', () => {
    const error = errorFromPayload(
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      ctx,
    )
    expect(error).toMatchObject({ code: 'overloaded_error', retryable: true, providerMessage: 'Overloaded' })
    expect(error.message).toBe('acme reported an error in the stream overloaded_error: Overloaded')
  })

  test('an OpenRouter numeric code counts as a status', () => {
    const error = errorFromPayload({ error: { code: 502, message: 'Provider returned error' } }, ctx)
    expect(error).toMatchObject({ status: 502, retryable: true })
  })

  test('an invalid request error is not retryable', () => {
    const error = errorFromPayload({ error: { message: 'bad', type: 'invalid_request_error' } }, ctx)
    expect(error.retryable).toBe(false)
  })
})

test('errorFromThrown names the socket error behind a fetch failure', () => {
  const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
  const error = errorFromThrown(new TypeError('fetch failed', { cause }), ctx)
  expect(error).toMatchObject({ code: 'network', retryable: true })
  expect(error.message).toBe(
    'acme: network error: fetch failed (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1)',
  )
})

test('redact leaves short strings alone so it cannot blank out common words', () => {
  expect(redact('key abc in text', 'abc')).toBe('key abc in text')
  expect(redact('key 0123456789 in text', '0123456789')).toBe('key [redacted] in text')
})

describe('redact finds the key percent-encoded, as a URL carries it', () => {
  const key = 'sk-live/abc+def=0123456789'

  test('in its encodeURIComponent form', () => {
    expect(redact(`GET /v1/${encodeURIComponent(key)}/models`, key)).toBe('GET /v1/[redacted]/models')
  })

  test('with lowercase hex digits, or only some characters encoded', () => {
    const lower = encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())
    expect(redact(`at ${lower} end`, key)).toBe('at [redacted] end')
    expect(redact('at sk-live/abc%2Bdef=0123456789 end', key)).toBe('at [redacted] end')
  })

  test('trimmed and encoded, when the key came with whitespace around it', () => {
    expect(redact(`/x/${encodeURIComponent(key)}/y`, ` ${key}\n`)).toBe('/x/[redacted]/y')
  })
})

describe('redact finds the key in every encoding a server may echo it in', () => {
  // Base64-like keys carry `+`, `/` and `=`; some keys carry `~`, `!`, `*` or a space.
  const key = 'sk-AbC+dEf/GhI=jKl~m n!o*0123=='
  const lower = (text: string) => text.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())
  /** RFC 3986 strict: everything but ALPHA / DIGIT / `-._~` escaped. */
  const strict = (text: string) =>
    encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  /** `application/x-www-form-urlencoded`, as URLSearchParams and HTML forms write it. */
  const form = (text: string) => new URLSearchParams({ q: text }).toString().slice('q='.length)

  test.each([
    ['form-encoded (space as +, ~ and ! escaped)', form(key)],
    ['form-encoded with lowercase hex', lower(form(key))],
    ['RFC 3986 strict percent-encoding', strict(key)],
    ['RFC 3986 strict with lowercase hex', lower(strict(key))],
    ['every character percent-encoded', [...key].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')],
    [
      'percent-encoded twice (a URL that carried an encoded URL)',
      encodeURIComponent(encodeURIComponent(key)),
    ],
    ['form-encoded, then percent-encoded again', lower(encodeURIComponent(form(key)))],
    ['JSON with / escaped (PHP json_encode)', key.replaceAll('/', '\\/')],
    [
      'JSON with \\u escapes',
      key.replace(/[+/=~]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    ],
  ])('%s', (_, spelled) => {
    expect(redact(`echo ${spelled} end`, key)).toBe('echo [redacted] end')
  })

  test('a + in the key that a form decoder read as a space', () => {
    expect(redact(`bad key ${key.replaceAll('+', ' ')}`, key)).toBe('bad key [redacted]')
  })

  test('text that differs from the key in one character is left alone', () => {
    const other = key.replace('AbC', 'AbD')
    expect(redact(`echo ${form(other)} end`, key)).toBe(`echo ${form(other)} end`)
  })
})
