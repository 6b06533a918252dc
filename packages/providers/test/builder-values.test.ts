import { decodeHistoryEvent, encodeHistoryEvent } from '@kode/protocol'
import { ProviderError, registerProvider } from '@kode/providers'
import { parseEventJson } from '@kode/providers/adapter'
import { sseFrame } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, testClient, useServer } from './helpers.js'

// A custom adapter passes on what its server sent, as docs/writing-a-provider.md shows
// (`out.usage({ inputTokens: data.input, ... })`). The builder checks each value, so a broken
// server's counts or stop details never make a message the history refuses: an agent would fail
// to record the turn.

const server = useServer()

interface PassEvent {
  text?: string
  usage?: Record<string, unknown>
  end?: string
  reason?: unknown
  details?: unknown
}

registerProvider('usage-reader-throws', () => ({
  defaultBaseUrl: 'http://unused',
  buildRequest: () => ({ path: '/u', headers: {}, body: {} }),
  createEventMapper: () => (event, out) => {
    const data = JSON.parse(event.data) as { text?: string; end?: string }
    if (data.text) out.text(data.text)
    // Counts read from the last chunk when the message is built, by a reader that trips on it.
    out.usage({ inputTokens: 5 })
    out.usageFrom(() => {
      throw new TypeError("Cannot read properties of undefined (reading 'prompt_tokens')")
    })
    if (data.end) out.stop(data.end, 'stop')
  },
}))

// Holds its citations until its `end` event, and reports what it holds when the message is built:
// its flush throws after reporting when the event says so.
registerProvider('holds-citations', () => ({
  defaultBaseUrl: 'http://unused',
  buildRequest: () => ({ path: '/h', headers: {}, body: {} }),
  createEventMapper: () => {
    let held: { url: string }[] = []
    let flushes = 0
    return (event, out) => {
      const data = JSON.parse(event.data) as { text?: string; cite?: string; trip?: boolean; end?: string }
      if (data.text) out.text(data.text)
      if (data.cite) {
        if (held.length === 0)
          out.atEnd((end) => {
            flushes++
            end.citations(held.map((c) => ({ ...c, title: `flush ${flushes}` })))
            if (data.trip) throw new TypeError('tripped after reporting')
          })
        held.push({ url: data.cite })
      }
      if (data.end) {
        out.citations(held.map((c) => ({ ...c, title: 'at the end event' })))
        held = []
        out.stop(data.end, 'stop')
      }
    }
  },
}))

registerProvider('pass-through', (config) => ({
  defaultBaseUrl: 'http://unused',
  buildRequest: () => ({ path: '/p', headers: {}, body: {} }),
  createEventMapper: () => (event, out) => {
    const data = parseEventJson(event.data, config.errors) as PassEvent
    if (data.text) out.text(data.text)
    if (data.usage) out.usage(data.usage as never)
    if (data.end) out.stop(data.end, data.reason as never, data.details as never)
  },
}))

async function messageFor(...events: PassEvent[]) {
  server().enqueue({ body: events.map((event) => sseFrame(JSON.stringify(event))) })
  return testClient(server(), { api: 'pass-through', model: 'm' }).complete(ask())
}

/** The message goes through the history codec unchanged. */
function expectRecordable(message: object): void {
  expect(decodeHistoryEvent(encodeHistoryEvent(message as never))).toEqual(message)
}

describe('values a custom adapter passes on unchecked', () => {
  test.each([
    ['null', null],
    ['a string', '12'],
    ['a fraction', 1.5],
    ['a negative number', -3],
  ])('a count that is %s counts as not reported; the valid ones stay', async (_, bad) => {
    const message = await messageFor(
      { text: 'Hi' },
      { usage: { inputTokens: bad, outputTokens: 4, cacheReadTokens: bad } },
      { end: 'done', reason: 'stop' },
    )
    expect(message.usage).toEqual({ outputTokens: 4 })
    expectRecordable(message)
  })

  test('usage with no valid count is no usage', async () => {
    const message = await messageFor(
      { text: 'Hi' },
      { usage: { inputTokens: 'many', outputTokens: null } },
      { end: 'done', reason: 'stop' },
    )
    expect(message).not.toHaveProperty('usage')
    expectRecordable(message)
  })

  test('stop details keep their text fields only', async () => {
    const message = await messageFor(
      { text: 'Hi' },
      { end: 'refused', reason: 'stop', details: { category: 7, explanation: 'policy' } },
    )
    expect(message.stopDetails).toEqual({ explanation: 'policy' })
    expectRecordable(message)
    const none = await messageFor({ text: 'Hi' }, { end: 'refused', reason: 'stop', details: 'policy' })
    expect(none).not.toHaveProperty('stopDetails')
    expectRecordable(none)
  })

  test('a stop reason Kode has no word for maps to none, and the raw value is kept', async () => {
    const message = await messageFor({ text: 'Hi' }, { end: 'finished', reason: 'finished' })
    expect(message).not.toHaveProperty('stopReason')
    expect(message.rawStopReason).toBe('finished')
    expectRecordable(message)
  })
})

test('a usageFrom reader that throws counts as reporting nothing: the response still ends with its message', async () => {
  server().enqueue({ body: [sseFrame('{"text":"Hi"}'), sseFrame('{"end":"done"}')] })
  const message = await testClient(server(), { api: 'usage-reader-throws', model: 'm' }).complete(ask())
  expect(message).toMatchObject({ parts: [{ type: 'text', text: 'Hi' }], stopReason: 'stop' })
  expect(message.usage).toEqual({ inputTokens: 5 })
  expectRecordable(message)
})

describe('atEnd: what a mapping holds is reported however the response ends', () => {
  const client = () => testClient(server(), { api: 'holds-citations', model: 'm' })
  /** What `pending` rejects with: a `ProviderError`. */
  const failure = (pending: Promise<unknown>): Promise<ProviderError | undefined> =>
    pending.then(
      () => undefined,
      (e: unknown) => (e instanceof ProviderError ? e : undefined),
    )

  test('a cut: the flush runs once, and the partial message has what it reported', async () => {
    server().enqueue({ body: [sseFrame('{"text":"Hi"}'), sseFrame('{"cite":"https://a.example/"}')] })
    const error = await failure(client().complete(ask()))
    expect(error?.code).toBe('stream_cut')
    expect(error?.partial?.parts).toEqual([
      { type: 'text', text: 'Hi', citations: [{ url: 'https://a.example/', title: 'flush 1' }] },
    ])
  })

  test('a flush that throws keeps what it reported before, and the response still ends', async () => {
    server().enqueue({
      body: [sseFrame('{"text":"Hi"}'), sseFrame('{"cite":"https://a.example/","trip":true}')],
    })
    const error = await failure(client().complete(ask()))
    expect(error?.code).toBe('stream_cut')
    expect(error?.partial?.parts).toEqual([
      { type: 'text', text: 'Hi', citations: [{ url: 'https://a.example/', title: 'flush 1' }] },
    ])
  })

  test('a response that ends normally: the mapping reported it already, the flush adds nothing', async () => {
    server().enqueue({
      body: [
        sseFrame('{"text":"Hi"}'),
        sseFrame('{"cite":"https://a.example/"}'),
        sseFrame('{"end":"done"}'),
      ],
    })
    const message = await client().complete(ask())
    expect(message.parts).toEqual([
      { type: 'text', text: 'Hi', citations: [{ url: 'https://a.example/', title: 'at the end event' }] },
    ])
    expectRecordable(message)
  })
})
