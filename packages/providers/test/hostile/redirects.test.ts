import { ProviderError } from '@kode/providers'
import { createSseTestServer, type SseTestServer } from '@kode/providers/testing'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { ask, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
let elsewhere: SseTestServer
beforeEach(async () => {
  elsewhere = await createSseTestServer()
})
afterEach(async () => {
  await elsewhere.close()
})

const KEY = 'sk-test-key-0123456789'
const text = () => streamOf('anthropic', fixture('anthropic', 'anthropic-text'))

describe('redirects', () => {
  test('a redirect within the origin is followed with the same POST, key and body', async () => {
    server().enqueue({ status: 307, headers: { location: '/v2/messages' } }, text())
    const message = await testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' }).complete(
      ask(),
    )
    expect(message.stopReason).toBe('stop')
    const [first, second] = server().requests
    expect(second).toMatchObject({ method: 'POST', url: '/v2/messages', rawBody: first!.rawBody })
    expect(second!.headers['x-api-key']).toBe(KEY)
  })

  test.each([301, 302, 303, 307, 308])(
    'a %i to another origin is refused: the key and prompt never reach it, and it is not retried',
    async (status) => {
      server().enqueue({ status, headers: { location: `${elsewhere.url}/messages` } })
      const client = testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' })
      const error = await client.complete(ask('my secret prompt')).catch((e: unknown) => e)
      expect(error).toMatchObject({ name: 'ProviderError', code: 'redirect', retryable: false })
      expect((error as Error).message).toContain(elsewhere.url)
      expect(elsewhere.requests).toHaveLength(0)
      expect(server().requests).toHaveLength(1)
    },
  )

  test('google: x-goog-api-key is not carried to another origin either', async () => {
    server().enqueue({ status: 302, headers: { location: `${elsewhere.url}/steal` } })
    const client = testClient(server(), { api: 'google', model: 'gemini-2.5-flash' })
    await expect(client.complete(ask())).rejects.toMatchObject({ code: 'redirect' })
    expect(elsewhere.requests).toHaveLength(0)
  })

  test('with followCrossOriginRedirects the host opts in: the request goes there', async () => {
    server().enqueue({ status: 308, headers: { location: `${elsewhere.url}/messages` } })
    elsewhere.enqueue(text())
    const client = testClient(server(), {
      api: 'anthropic',
      model: 'claude-sonnet-4-5',
      followCrossOriginRedirects: true,
    })
    expect((await client.complete(ask())).stopReason).toBe('stop')
    expect(elsewhere.requests[0]).toMatchObject({ method: 'POST', url: '/messages' })
    expect(elsewhere.requests[0]!.headers['x-api-key']).toBe(KEY)
  })

  test('a redirect within the origin to a URL with user:password@ cannot be followed: redirect, not retried', async () => {
    // fetch refuses such a URL with a TypeError, which would otherwise pass for a network error and be retried.
    const location = `${server().url.replace('://', '://user:hunter2-pass@')}/v2/messages`
    server().handle(() => ({ status: 307, headers: { location } }))
    const client = testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' })
    const error = (await client.complete(ask()).catch((e: unknown) => e)) as Error
    expect(error).toMatchObject({ code: 'redirect', retryable: false })
    expect(error.message).toContain(`${server().url}/v2/messages`)
    expect(String(error)).not.toContain('hunter2')
    expect(server().requests).toHaveLength(1)
  })

  test('a redirect loop ends after 5 hops with a typed error', async () => {
    server().handle(() => ({ status: 307, headers: { location: '/loop' } }))
    const client = testClient(server(), { api: 'openai-chat', model: 'gpt-4o' })
    await expect(client.complete(ask())).rejects.toMatchObject({ code: 'redirect', retryable: false })
    expect(server().requests).toHaveLength(6)
  })

  test.each([301, 302, 303, 307, 308])(
    'a %i without a Location header says so, with the URL it answered, and is not retried',
    async (status) => {
      server().enqueue({ status, headers: { 'x-request-id': 'req-redirect' }, body: '{}' })
      const client = testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' })
      const error = await client.complete(ask()).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ProviderError)
      expect(error).toMatchObject({ code: 'redirect', retryable: false, status, requestId: 'req-redirect' })
      expect((error as Error).message).toBe(
        `anthropic: HTTP ${status} redirect without a Location header from ${server().url}/messages [request req-redirect]`,
      )
      expect(server().requests).toHaveLength(1)
    },
  )

  test('a redirect without a Location header names the URL without its query or the key', async () => {
    // Followed within the origin to a URL carrying secrets, which then answers with no Location.
    server().enqueue(
      { status: 307, headers: { location: `/v2/${KEY}/messages?key=AIzaSyD-leak-9876&alt=sse` } },
      { status: 302 },
    )
    const client = testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' })
    const error = (await client.complete(ask()).catch((e: unknown) => e)) as Error
    expect(error).toMatchObject({ code: 'redirect', retryable: false, status: 302 })
    expect(error.message).toContain(`without a Location header from ${server().url}/v2/[redacted]/messages`)
    expect(String(error)).not.toContain(KEY)
    expect(String(error)).not.toContain('AIzaSyD-leak')
    expect(String(error)).not.toContain('alt=sse')
    expect(server().requests).toHaveLength(2)
  })

  test('the refused location is quoted as origin and path: no credentials, query or fragment', async () => {
    const target = elsewhere.url.replace('http://', 'http://admin:pa55word-secret@')
    server().enqueue({
      status: 302,
      headers: { location: `${target}/x?api_key=AIzaSyD-leak-9876&alt=sse&state=opaque-42#frag-7` },
    })
    const client = testClient(server(), { api: 'openai-chat', model: 'gpt-4o' })
    const error = (await client.complete(ask()).catch((e: unknown) => e)) as Error
    expect(error).toMatchObject({ code: 'redirect' })
    expect(error.message).toBe(
      `openai-chat: the server redirected (302) to another origin: ${elsewhere.url}/x; the API key and prompt were not sent there (set followCrossOriginRedirects to allow it)`,
    )
    for (const secret of ['admin', 'pa55word', 'AIzaSyD-leak', 'alt=sse', 'opaque-42', 'frag-7'])
      expect(String(error)).not.toContain(secret)
  })

  describe('a key URLs must percent-encode', () => {
    const ODD_KEY = 'sk-test/key+0123456789=='
    const encoded = encodeURIComponent(ODD_KEY)

    test('is redacted from the URL a redirect without a Location answered from', async () => {
      server().enqueue({ status: 307, headers: { location: `/v2/${encoded}/messages` } }, { status: 302 })
      const client = testClient(server(), {
        api: 'anthropic',
        model: 'claude-sonnet-4-5',
        apiKey: ODD_KEY,
      })
      const error = (await client.complete(ask()).catch((e: unknown) => e)) as Error
      expect(error).toMatchObject({ code: 'redirect', status: 302 })
      expect(error.message).toContain(`from ${server().url}/v2/[redacted]/messages`)
      expect(String(error)).not.toContain(encoded)
      expect(String(error)).not.toContain('0123456789')
    })

    test('is redacted from the path of a refused cross-origin location', async () => {
      server().enqueue({ status: 302, headers: { location: `${elsewhere.url}/k/${encoded}/messages` } })
      const client = testClient(server(), {
        api: 'anthropic',
        model: 'claude-sonnet-4-5',
        apiKey: ODD_KEY,
      })
      const error = (await client.complete(ask()).catch((e: unknown) => e)) as Error
      expect(error).toMatchObject({ code: 'redirect' })
      expect(error.message).toContain(`to another origin: ${elsewhere.url}/k/[redacted]/messages;`)
      expect(String(error)).not.toContain('0123456789')
      expect(elsewhere.requests).toHaveLength(0)
    })
  })
})

describe('redirects of a relative baseUrl sent through the host fetch', () => {
  /** A host fetch that sends a relative URL to the test server, as an app's proxy fetch would. */
  const hostFetch =
    (seen: string[]): typeof fetch =>
    (input, init) => {
      seen.push(String(input))
      const url = String(input)
      return fetch(url.startsWith('/') ? `${server().url}${url}` : url, init)
    }
  const relativeClient = (seen: string[], extra: { followCrossOriginRedirects?: boolean } = {}) =>
    testClient(server(), {
      api: 'anthropic',
      model: 'claude-sonnet-4-5',
      baseUrl: '/llm/v1',
      fetch: hostFetch(seen),
      ...extra,
    })
  const BODY = {
    model: 'claude-sonnet-4-5',
    max_tokens: 64000,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
    ],
    stream: true,
  }

  test.each([
    ['a path', '/llm/v2/messages'],
    ['a path relative to the request', '../v2/messages'],
  ])(
    'a same-origin redirect to %s is followed, through the host fetch, with the same POST',
    async (_, location) => {
      server().enqueue({ status: 307, headers: { location } }, text())
      const seen: string[] = []
      const message = await relativeClient(seen).complete(ask())
      expect(message.parts).toEqual([
        {
          type: 'text',
          text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
        },
      ])
      expect(seen).toEqual(['/llm/v1/messages', '/llm/v2/messages'])
      const [first, second] = server().requests
      expect(first).toMatchObject({ method: 'POST', url: '/llm/v1/messages', body: BODY })
      expect(second).toMatchObject({ method: 'POST', url: '/llm/v2/messages', body: BODY })
      expect(second!.headers['x-api-key']).toBe(KEY)
    },
  )

  test('a redirect naming the origin the host fetch reached is followed there, through the host fetch', async () => {
    server().enqueue({ status: 308, headers: { location: `${server().url}/llm/v2/messages?x=1` } }, text())
    const seen: string[] = []
    expect((await relativeClient(seen).complete(ask())).stopReason).toBe('stop')
    expect(seen).toEqual(['/llm/v1/messages', '/llm/v2/messages?x=1'])
    expect(server().requests[1]).toMatchObject({ method: 'POST', url: '/llm/v2/messages?x=1', body: BODY })
  })

  test('a redirect without a Location is a redirect error naming the path, not retried', async () => {
    server().enqueue({ status: 302 })
    const seen: string[] = []
    const error = await relativeClient(seen)
      .complete(ask())
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'ProviderError', code: 'redirect', retryable: false, status: 302 })
    expect((error as Error).message).toBe(
      'anthropic: HTTP 302 redirect without a Location header from /llm/v1/messages',
    )
    expect(seen).toEqual(['/llm/v1/messages'])
  })

  test('a redirect to another origin is still refused', async () => {
    server().enqueue({ status: 307, headers: { location: `${elsewhere.url}/messages` } })
    const seen: string[] = []
    const error = await relativeClient(seen)
      .complete(ask())
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'ProviderError', code: 'redirect', retryable: false })
    expect(seen).toEqual(['/llm/v1/messages'])
    expect(elsewhere.requests).toHaveLength(0)
  })
})
