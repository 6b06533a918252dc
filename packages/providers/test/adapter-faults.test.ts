import { ProviderError, type RetryInfo, registerProvider } from '@kode/providers'
import type { EventMapper, WireRequest } from '@kode/providers/adapter'
import { sseFrame } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, testClient, useServer } from './helpers.js'

// A mistake in an adapter (a body JSON cannot write, a mapper factory that throws or returns
// nothing, an odd value thrown) fails the same way on every attempt: it is a typed error that
// says what went wrong, sent and tried once, never a "network error" retried with backoff.

const server = useServer()

const KEY = 'sk-adapter-fault-0123456789'

const answer = () => ({ body: [sseFrame('{"text":"Hi"}'), sseFrame('{"end":"done"}')] })

const speaks: EventMapper = (event, out) => {
  const data = JSON.parse(event.data) as { text?: string; end?: string }
  if (data.text) out.text(data.text)
  if (data.end) out.stop(data.end, 'stop')
}

let registered = 0
function adapterWith(parts: { build?: () => unknown; mapper?: () => unknown }): string {
  const api = `faulty-${++registered}`
  registerProvider(api, () => ({
    defaultBaseUrl: 'http://unused',
    buildRequest: (parts.build ?? (() => ({ path: '/f', headers: {}, body: {} }))) as () => WireRequest,
    createEventMapper: (parts.mapper ?? (() => speaks)) as () => EventMapper,
  }))
  return api
}

/** The error the call ends with, the retries it made, and how many requests reached the server. */
async function failureOf(api: string) {
  for (let i = 0; i < 4; i++) server().enqueue(answer())
  const retries: RetryInfo[] = []
  const client = testClient(server(), { api, model: 'm', apiKey: KEY })
  const error = await client.complete(ask(), { onRetry: (info) => retries.push(info) }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(ProviderError.is(error), String(error)).toBe(true)
  const failure = error as ProviderError
  expect(failure.message).not.toContain(KEY)
  return { error: failure, retries: retries.length, requests: server().requests.length }
}

const cyclic: Record<string, unknown> = {}
cyclic.self = cyclic

describe('a request the adapter built wrong', () => {
  test.each([
    ['a body JSON cannot write (a BigInt)', { path: '/f', headers: {}, body: { n: 1n } }, /BigInt/],
    ['a body JSON cannot write (a cycle)', { path: '/f', headers: {}, body: cyclic }, /circular/],
    ['no headers', { path: '/f', body: {} }, /headers/],
    ['no path', { headers: {}, body: {} }, /path/],
    ['nothing', undefined, /could not build the request/],
  ])('%s is an invalid_request; nothing is sent or retried', async (_, wire, says) => {
    const { error, retries, requests } = await failureOf(adapterWith({ build: () => wire }))
    expect(error).toMatchObject({ code: 'invalid_request', retryable: false })
    expect(error.message).toMatch(says)
    expect({ retries, requests }).toEqual({ retries: 0, requests: 0 })
  })

  test('a path that makes no URL with the base URL is an invalid_request naming it; nothing is sent', async () => {
    const api = adapterWith({ build: () => ({ path: 'chat', headers: {}, body: {} }) })
    const { error, retries, requests } = await failureOf(api)
    expect(error).toMatchObject({ code: 'invalid_request', retryable: false })
    expect(error.message).toContain('"chat"')
    expect({ retries, requests }).toEqual({ retries: 0, requests: 0 })
  })
})

describe('an event mapper the adapter cannot make', () => {
  test.each([
    [
      'throws',
      () => {
        throw new Error(`no mapper for ${KEY}`)
      },
      /no mapper for \[redacted\]/,
    ],
    ['returns nothing (a function body that forgot its return)', () => undefined, /not a function/],
  ])(
    'createEventMapper that %s is an invalid_request saying so; nothing is sent or retried',
    async (_, mapper, says) => {
      const { error, retries, requests } = await failureOf(adapterWith({ mapper }))
      expect(error).toMatchObject({ code: 'invalid_request', retryable: false })
      expect(error.message).toMatch(says)
      expect({ retries, requests }).toEqual({ retries: 0, requests: 0 })
    },
  )
})

describe('odd values a mapping throws', () => {
  test.each([
    ['an object without a prototype', () => Object.create(null), /\[object Object\]/],
    ['a plain object with a message', () => ({ message: 'bad frame' }), /bad frame/],
    ['undefined', () => undefined, /\(undefined\)/],
  ])('%s is an invalid_response quoting the event, not retried', async (_, value, says) => {
    const api = adapterWith({
      mapper: () => () => {
        throw value()
      },
    })
    const { error, retries, requests } = await failureOf(api)
    expect(error).toMatchObject({ code: 'invalid_response', retryable: false })
    expect(error.message).toMatch(says)
    expect(error.message).toContain('{"text":"Hi"}')
    expect({ retries, requests }).toEqual({ retries: 0, requests: 1 })
  })
})

test('aborting while buildRequest still waits (an image file on a slow disk) ends the stream aborted at once', async () => {
  const api = adapterWith({ build: () => new Promise(() => {}) })
  const controller = new AbortController()
  const client = testClient(server(), { api, model: 'm' })
  const stream = client.stream(ask(), { signal: controller.signal })[Symbol.asyncIterator]()
  const first = stream.next()
  controller.abort()
  const item = await first
  expect(item).toMatchObject({ done: false, value: { type: 'done', message: { stopReason: 'aborted' } } })
  expect(await stream.next()).toEqual({ done: true, value: undefined })
  expect(server().requests).toHaveLength(0)
})
