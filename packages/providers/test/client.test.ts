import { createClient, ProviderError, registerProvider } from '@kode/providers'
import { parseEventJson } from '@kode/providers/adapter'
import { sseFrame } from '@kode/providers/testing'
import { describe, expect, test, vi } from 'vitest'
import { ask, collect, deterministic, useServer } from './helpers.js'

const server = useServer()

describe('createClient', () => {
  test('an unknown api is a clear invalid_config error', () => {
    const error = (() => {
      try {
        createClient({ api: 'nope', model: 'm' })
      } catch (e) {
        return e
      }
    })()
    expect(ProviderError.is(error) && error.code).toBe('invalid_config')
    expect((error as Error).message).toContain('unknown api "nope"; available: openai-chat')
  })

  test('a model that is not a non-empty string (an unset environment variable) is an invalid_config error', () => {
    for (const model of ['', '  ', undefined]) {
      const error = (() => {
        try {
          createClient({ api: 'anthropic', model: model as string })
        } catch (e) {
          return e
        }
      })()
      expect(ProviderError.is(error) && [error.code, error.message]).toEqual([
        'invalid_config',
        `anthropic: model ${JSON.stringify(model) ?? 'undefined'} is not a model id; pass the id the provider names the model by, such as claude-sonnet-4-5 or gpt-4.1`,
      ])
    }
  })

  test('modelInfo comes from the catalog, and the host catalog overrides it', () => {
    expect(createClient({ api: 'openai-chat', model: 'gpt-4o' }).modelInfo).toEqual({
      contextWindow: 128_000,
      maxOutputTokens: 16_384,
      prices: { input: 2.5, output: 10, cacheRead: 1.25 },
      images: true,
    })
    const own = { contextWindow: 8_192 }
    expect(createClient({ api: 'openai-chat', model: 'gpt-4o', catalog: { 'gpt-4o': own } }).modelInfo).toBe(
      own,
    )
    expect(createClient({ api: 'openai-chat', model: 'local-model' }).modelInfo).toBeUndefined()
  })

  test('an adapter completesOn no version of Kode knows is an invalid_config error at creation', () => {
    registerProvider('odd-completion', () => ({
      defaultBaseUrl: 'http://unused',
      buildRequest: () => ({ path: '/', headers: {}, body: {} }),
      createEventMapper: () => () => {},
      completesOn: 'eventually' as never,
    }))
    expect(() => createClient({ api: 'odd-completion', model: 'm' })).toThrow(
      expect.objectContaining({ code: 'invalid_config' }),
    )
  })

  test.each([
    ['returns no adapter', () => undefined, 'returned no adapter'],
    [
      'returns an adapter without defaultBaseUrl, and the host gives no baseUrl',
      () => ({
        buildRequest: () => ({ path: '/', headers: {}, body: {} }),
        createEventMapper: () => () => {},
      }),
      'no defaultBaseUrl',
    ],
  ])('a factory that %s is an invalid_config error at creation, naming the problem', (_, factory, says) => {
    registerProvider('half-made', factory as never)
    expect(() => createClient({ api: 'half-made', model: 'm' })).toThrow(
      expect.objectContaining({ code: 'invalid_config', message: expect.stringContaining(says) }),
    )
  })

  test.each([
    [
      'an Error quoting the key',
      (key: string) => new Error(`no region for key ${key}`),
      /no region for key \[redacted\]/,
    ],
    ['a string', () => 'region missing', /region missing/],
    ['undefined', () => undefined, /undefined/],
  ])(
    'a factory that throws %s is an invalid_config error at creation, naming the provider, without the key',
    (_, thrown, says) => {
      const apiKey = 'sk-factory-throws-0123456789'
      registerProvider('throws-at-creation', () => {
        throw thrown(apiKey)
      })
      let error: unknown
      try {
        createClient({ api: 'throws-at-creation', model: 'm', apiKey })
      } catch (caught) {
        error = caught
      }
      expect(ProviderError.is(error), String(error)).toBe(true)
      expect(error).toMatchObject({ code: 'invalid_config', retryable: false })
      const message = (error as ProviderError).message
      expect(message).toMatch(/^throws-at-creation: the provider factory failed: /)
      expect(message).toMatch(says)
      expect(JSON.stringify((error as ProviderError).cause ?? null)).not.toContain(apiKey)
      expect(String(((error as ProviderError).cause as Error | undefined)?.message)).not.toContain(apiKey)
    },
  )

  test('a ProviderError a factory throws (its own invalid_config) is thrown as it is', () => {
    const own = new ProviderError('acme: region must be eu or us', {
      code: 'invalid_config',
      retryable: false,
    })
    registerProvider('rejects-config', () => {
      throw own
    })
    expect(() => createClient({ api: 'rejects-config', model: 'm' })).toThrow(own)
  })

  test.each([
    ['no scheme', 'api.openai.com/v1'],
    ['a host taken for a scheme', 'localhost:11434/v1'],
    ['a scheme fetch does not speak', 'ftp://models.example/v1'],
    ['a relative root with no page to resolve it against', '/llm/v1'],
  ])(
    'a baseUrl with %s is an invalid_config error at creation, not a network error retried',
    (_, baseUrl) => {
      expect(() => createClient({ api: 'openai-chat', model: 'm', baseUrl })).toThrow(
        expect.objectContaining({ code: 'invalid_config', message: expect.stringContaining(baseUrl) }),
      )
    },
  )

  test.each([
    [
      'a key in its query',
      'generativelanguage.googleapis.com/v1beta?key=AIzaSyA0123456789abcdefghijklmnopqrstu',
      'AIzaSyA0123456789abcdefghijklmnopqrstu',
    ],
    ['a user and password', 'user:s3cretpassw0rd@models.example/v1', 's3cretpassw0rd'],
    [
      'a user and password on an http(s) root',
      'https://user:s3cretpassw0rd@models.example/v1',
      's3cretpassw0rd',
    ],
  ])('a malformed baseUrl with %s is named without it', (_, baseUrl, secret) => {
    let error: unknown
    try {
      createClient({ api: 'google', model: 'm', baseUrl })
    } catch (thrown) {
      error = thrown
    }
    expect(error).toMatchObject({ code: 'invalid_config' })
    expect((error as Error).message).toContain('[redacted]')
    expect((error as Error).message).not.toContain(secret)
  })

  test('a relative baseUrl in a page is resolved against the page, so requests and redirects have a full URL', async () => {
    const requested: string[] = []
    const fetchInPage: typeof fetch = async (input) => {
      requested.push(String(input))
      return new Response(
        'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
        {
          headers: { 'content-type': 'text/event-stream' },
        },
      )
    }
    vi.stubGlobal('location', new URL('https://app.example/chat/index.html'))
    try {
      const client = createClient({ api: 'openai-chat', model: 'm', baseUrl: '/llm/v1/', fetch: fetchInPage })
      await client.complete({
        messages: [{ role: 'user', id: 'u1', createdAt: 0, parts: [{ type: 'text', text: 'hi' }] }],
      })
    } finally {
      vi.unstubAllGlobals()
    }
    expect(requested).toEqual(['https://app.example/llm/v1/chat/completions'])
  })

  test("a location that throws when read, as Deno's without --location, is no page", () => {
    Object.defineProperty(globalThis, 'location', {
      configurable: true,
      get() {
        throw new ReferenceError('Access to "location", run again with --location <href>.')
      },
    })
    try {
      expect(createClient({ api: 'openai-chat', model: 'm', baseUrl: 'http://localhost:11434/v1' }).api).toBe(
        'openai-chat',
      )
      expect(() => createClient({ api: 'openai-chat', model: 'm', baseUrl: '/llm/v1' })).toThrow(
        expect.objectContaining({ code: 'invalid_config' }),
      )
    } finally {
      Reflect.deleteProperty(globalThis, 'location')
    }
  })

  test('a host fetch may take a root the default fetch could not reach', () => {
    const ownFetch: typeof fetch = async () => new Response('')
    expect(() =>
      createClient({ api: 'openai-chat', model: 'm', baseUrl: 'unix:/run/llm.sock', fetch: ownFetch }),
    ).not.toThrow()
  })

  test("a baseUrl with a query keeps it after the api's path (Azure's classic api-version)", async () => {
    const chat = 'data: {"choices":[{"delta":{"content":"Hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    const gemini =
      'data: {"candidates":[{"content":{"parts":[{"text":"Hi"}]},"finishReason":"STOP"}]}\r\n\r\n'
    server().enqueue({ body: chat }, { body: gemini })
    const root = `${server().url}/openai/deployments/gpt-4o/?api-version=2024-10-21`
    await createClient({ api: 'openai-chat', model: 'gpt-4o', baseUrl: root }).complete(ask())
    const gateway = `${server().url}/v1beta?tenant=a`
    await createClient({ api: 'google', model: 'gemini-2.5-flash', baseUrl: gateway }).complete(ask())
    expect(server().requests.map((r) => r.url)).toEqual([
      '/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21',
      '/v1beta/models/gemini-2.5-flash:streamGenerateContent?tenant=a&alt=sse',
    ])
  })

  test('provider defaults to the api and labels messages and errors', () => {
    const client = createClient({ api: 'openai-chat', model: 'm', provider: 'deepseek' })
    expect([client.api, client.provider, client.model]).toEqual(['openai-chat', 'deepseek', 'm'])
  })
})

test('registerProvider: a custom wire api from two mappings over the shared transport', async () => {
  // A made-up wire: `data: {"say": "..."}` events, then `data: {"end": "finished"}`. It declares no
  // `completesOn`, so the stop reason completes the response, as it did before adapters declared it.
  registerProvider('echo-wire', (config) => ({
    defaultBaseUrl: 'http://unused',
    buildRequest: (request) => ({
      path: '/echo',
      headers: { 'x-key': config.apiKey ?? '' },
      body: { model: config.model, n: request.messages.length },
    }),
    createEventMapper: () => (event, out) => {
      const data = parseEventJson(event.data, config.errors) as { say?: string; end?: string }
      if (data.say) out.text(data.say)
      if (data.end) out.stop(data.end, 'stop')
    },
  }))
  server().enqueue({
    body: [sseFrame('{"say":"Hel"}'), sseFrame('{"say":"lo"}'), sseFrame('{"end":"finished"}')],
  })
  const client = createClient({
    api: 'echo-wire',
    model: 'e1',
    apiKey: 'k',
    baseUrl: server().url,
    ...deterministic(),
  })
  const items = await collect(client.stream(ask()))
  expect(items.map((i) => i.type)).toEqual(['text_delta', 'text_delta', 'done'])
  expect(items.at(-1)).toEqual({
    type: 'done',
    message: {
      role: 'assistant',
      id: 'id-1',
      createdAt: 1_000,
      parts: [{ type: 'text', text: 'Hello' }],
      stopReason: 'stop',
      rawStopReason: 'finished',
      model: 'e1',
      provider: 'echo-wire',
      api: 'echo-wire',
      durationMs: 0,
    },
  })
  expect(server().requests[0]).toMatchObject({ url: '/echo', body: { model: 'e1', n: 1 } })
  expect(server().requests[0]?.headers['x-key']).toBe('k')
})

test('headers are checked once per client, and an adapter that changes its headers sends the new ones', async () => {
  // One headers object, updated in place before each request (a token that rotates).
  const headers: Record<string, string> = { authorization: 'Bearer t1' }
  registerProvider('rotating-token', () => ({
    defaultBaseUrl: 'http://unused',
    buildRequest: (request) => {
      headers.authorization = `Bearer t${request.messages.length}`
      if (request.messages.length === 3) headers['x-extra'] = 'yes'
      return { path: '/r', headers, body: {} }
    },
    createEventMapper: () => (event, out) => {
      if (event.data === 'end') out.stop('end', 'stop')
    },
  }))
  const config = {
    api: 'rotating-token',
    model: 'm',
    baseUrl: server().url,
    headers: { 'x-host': 'h1' } as Record<string, string>,
  }
  const client = createClient(config)
  // The config is read when the client is made: changing it later changes nothing.
  config.headers['x-host'] = 'changed'
  const request = ask()
  for (let n = 1; n <= 4; n++) {
    server().enqueue({ body: [sseFrame('end')] })
    await client.complete({ messages: Array.from({ length: n }, () => request.messages[0]!) })
  }
  const sent = server().requests.map((r) => [
    r.headers.authorization,
    r.headers['x-extra'],
    r.headers['x-host'],
  ])
  expect(sent).toEqual([
    ['Bearer t1', undefined, 'h1'],
    ['Bearer t2', undefined, 'h1'],
    ['Bearer t3', 'yes', 'h1'],
    ['Bearer t4', 'yes', 'h1'],
  ])
})

test('registerProvider rejects an empty api name', () => {
  expect(() => registerProvider('', () => ({}) as never)).toThrow(TypeError)
})

test('fetch and dispatcher are passed through; host headers override the adapter', async () => {
  const dispatcher = { name: 'pool' }
  let seen: { url: string; init: RequestInit & { dispatcher?: unknown } } | undefined
  const fetch = async (url: string | URL | Request, init?: RequestInit) => {
    seen = { url: String(url), init: init as RequestInit & { dispatcher?: unknown } }
    return new Response(
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
      {
        headers: { 'content-type': 'text/event-stream' },
      },
    )
  }
  const client = createClient({
    api: 'openai-chat',
    model: 'm',
    apiKey: 'sk-0123456789',
    fetch,
    dispatcher,
    headers: { authorization: 'Bearer other' },
  })
  await client.complete(ask())
  expect(seen?.url).toBe('https://api.openai.com/v1/chat/completions')
  expect(seen?.init.dispatcher).toBe(dispatcher)
  expect((seen!.init.headers as Record<string, string>).authorization).toBe('Bearer other')
})

test('a host header overrides the one of the same name whatever its case, rather than joining it', async () => {
  server().enqueue(
    { body: 'data: {"choices":[{"delta":{"content":"Hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n' },
    { body: 'event: message_stop\ndata: {"type":"message_stop"}\n\n' },
  )
  const headers = { Authorization: 'Bearer gateway-token', 'Content-Type': 'application/json; charset=utf-8' }
  await createClient({
    api: 'openai-chat',
    model: 'm',
    apiKey: 'sk-0123456789',
    baseUrl: server().url,
    headers,
  })
    .complete(ask())
    .catch(() => undefined)
  const anthropic = { 'Anthropic-Version': '2023-06-01', 'X-Api-Key': 'sk-ant-host-key' }
  await createClient({
    api: 'anthropic',
    model: 'm',
    apiKey: 'sk-ant-0123456789',
    baseUrl: server().url,
    headers: anthropic,
  })
    .complete(ask())
    .catch(() => undefined)
  const [chat, messages] = server().requests
  expect(chat!.headers).toMatchObject({
    authorization: 'Bearer gateway-token',
    'content-type': 'application/json; charset=utf-8',
  })
  expect(messages!.headers).toMatchObject({
    'anthropic-version': '2023-06-01',
    'x-api-key': 'sk-ant-host-key',
  })
})

test("the default fetch is the global one, called as a browser's fetch must be (never as a method)", async () => {
  const original = globalThis.fetch
  let receiver: unknown = 'not called'
  // A browser's fetch throws "Illegal invocation" unless `this` is the window (or undefined).
  globalThis.fetch = function (this: unknown) {
    receiver = this
    return Promise.resolve(
      new Response('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n', {
        headers: { 'content-type': 'text/event-stream' },
      }),
    )
  } as typeof fetch
  try {
    await createClient({ api: 'openai-chat', model: 'm', apiKey: 'sk-0123456789' }).complete(ask())
  } finally {
    globalThis.fetch = original
  }
  expect([undefined, globalThis]).toContain(receiver)
})

test("a host's fetch is called bare too, so `fetch: window.fetch` works in a browser", async () => {
  let receiver: unknown = 'not called'
  const hostFetch = function (this: unknown) {
    receiver = this
    return Promise.resolve(
      new Response('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n', {
        headers: { 'content-type': 'text/event-stream' },
      }),
    )
  } as typeof fetch
  await createClient({ api: 'openai-chat', model: 'm', apiKey: 'sk-0123456789', fetch: hostFetch }).complete(
    ask(),
  )
  expect([undefined, globalThis]).toContain(receiver)
})

test('registering a name again replaces its factory for clients made after; earlier clients keep theirs', async () => {
  const saying = (word: string) => () => ({
    defaultBaseUrl: 'http://unused',
    buildRequest: () => ({ path: `/${word}`, headers: {}, body: {} }),
    createEventMapper: () => (_: unknown, out: { stop: (raw: string, reason: 'stop') => void }) =>
      out.stop(word, 'stop'),
  })
  registerProvider('registered-twice', saying('first'))
  const before = createClient({ api: 'registered-twice', model: 'm', baseUrl: server().url })
  registerProvider('registered-twice', saying('second'))
  const after = createClient({ api: 'registered-twice', model: 'm', baseUrl: server().url })
  server().enqueue({ body: [sseFrame('x')] }, { body: [sseFrame('x')] })
  expect((await before.complete(ask())).rawStopReason).toBe('first')
  expect((await after.complete(ask())).rawStopReason).toBe('second')
  expect(server().requests.map((request) => request.url)).toEqual(['/first', '/second'])
})
