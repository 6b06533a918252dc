import type { StreamItem } from '@kode/protocol'
import { type ProviderError, readBatches, readReadyItems } from '@kode/providers'
import { frameFor } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, collect, fixture, testClient, useServer } from '../helpers.js'

const server = useServer()
const client = () => testClient(server(), { api: 'anthropic', model: 'claude-sonnet-4-5' })

/** Every batch of one stream, and the error that ended it, if any. */
async function batchesOf(
  stream: AsyncIterable<StreamItem>,
): Promise<{ batches: StreamItem[][]; error: ProviderError | undefined }> {
  const batches: StreamItem[][] = []
  try {
    for await (const batch of readBatches(stream)) batches.push(batch)
    return { batches, error: undefined }
  } catch (error) {
    return { batches, error: error as ProviderError }
  }
}

describe('readBatches', () => {
  test('hands out the very items of the stream, in order, several per batch when one read holds them', async () => {
    const frames = frameFor('anthropic', fixture('anthropic', 'anthropic-text'))
    // One write: every event arrives in one read, so the items after the first are ready at once.
    server().enqueue({ body: frames, chunks: false })
    const itemByItem = await collect(client().stream(ask()))
    server().enqueue({ body: frames, chunks: false })
    const { batches, error } = await batchesOf(client().stream(ask()))
    expect(error).toBeUndefined()
    expect(batches.flat()).toEqual(itemByItem)
    expect(itemByItem.filter((item) => item.type === 'text_delta').length).toBeGreaterThan(1)
    expect(batches.length).toBeLessThan(itemByItem.length)
    expect(batches.every((batch) => batch.length > 0)).toBe(true)
  })

  test('with the default chunking the items and the final message are those of the stream', async () => {
    const frames = frameFor('anthropic', fixture('anthropic', 'anthropic-text'))
    server().enqueue({ body: frames })
    const itemByItem = await collect(client().stream(ask()))
    server().enqueue({ body: frames })
    const { batches } = await batchesOf(client().stream(ask()))
    expect(batches.flat()).toEqual(itemByItem)
    expect(batches.flat().at(-1)).toMatchObject({ type: 'done', message: { stopReason: 'stop' } })
  })

  test('an event that is not JSON ends the read after the items before it, with the same error', async () => {
    const frames = frameFor('anthropic', fixture('anthropic', 'anthropic-text'))
    const broken = [
      ...frames.slice(0, 4),
      'event: content_block_delta\ndata: {not json\n\n',
      ...frames.slice(4),
    ]
    server().enqueue({ body: broken, chunks: false })
    const expected: StreamItem[] = []
    let expectedError: unknown
    try {
      for await (const item of client().stream(ask())) expected.push(item)
    } catch (thrown) {
      expectedError = thrown
    }
    server().enqueue({ body: broken, chunks: false })
    const { batches, error } = await batchesOf(client().stream(ask()))
    expect(expectedError).toMatchObject({ code: 'invalid_response' })
    expect(error).toMatchObject({ code: 'invalid_response', message: (expectedError as Error).message })
    expect(batches.flat()).toEqual(expected)
    expect(error?.partial).toEqual((expectedError as ProviderError).partial)
  })

  test('breaking out of the loop cancels the request', async () => {
    const frames = frameFor('anthropic', fixture('anthropic', 'anthropic-text'))
    const firstText = frames.findIndex((frame) => frame.includes('"text_delta"'))
    server().enqueue({ body: frames, stallAfterBytes: frames.slice(0, firstText + 1).join('').length })
    const controller = new AbortController()
    let seen = 0
    for await (const batch of readBatches(client().stream(ask(), { signal: controller.signal }))) {
      seen += batch.length
      break
    }
    expect(seen).toBeGreaterThan(0)
    // The request was cancelled: the stalled server sees its connection close.
    expect(await server().ended(0)).toBe('client_closed')
  })

  test('an abort ends the read with the aborted done item', async () => {
    const frames = frameFor('anthropic', fixture('anthropic', 'anthropic-text'))
    server().enqueue({ body: frames, chunks: false })
    const controller = new AbortController()
    const items: StreamItem[] = []
    for await (const batch of readBatches(client().stream(ask(), { signal: controller.signal }))) {
      items.push(...batch)
      controller.abort()
    }
    expect(items.at(-1)).toMatchObject({ type: 'done', message: { stopReason: 'aborted' } })
  })

  test('a stream of another kind is read item by item', async () => {
    async function* items(): AsyncGenerator<StreamItem> {
      yield { type: 'text_delta', text: 'a' }
      yield { type: 'text_delta', text: 'b' }
    }
    const { batches } = await batchesOf(items())
    expect(batches).toEqual([[{ type: 'text_delta', text: 'a' }], [{ type: 'text_delta', text: 'b' }]])
  })
})

describe('the readers behave as async generators', () => {
  const frames = () => frameFor('anthropic', fixture('anthropic', 'anthropic-text'))

  test('next() called again before the last settled: the batches come in order, as one by one', async () => {
    server().enqueue({ body: frames() })
    const expected = (await batchesOf(client().stream(ask()))).batches
    server().enqueue({ body: frames() })
    const reader = readBatches(client().stream(ask()))
    const results = await Promise.all(Array.from({ length: expected.length + 2 }, () => reader.next()))
    expect(results.map((result) => result.value).filter(Boolean)).toEqual(expected)
    expect(results.slice(expected.length).every((result) => result.done)).toBe(true)
  })

  test('return() cancels the request, even before the first batch, and the reader is done', async () => {
    const all = frames()
    const firstText = all.findIndex((frame) => frame.includes('"text_delta"'))
    server().enqueue({ body: all, stallAfterBytes: all.slice(0, firstText + 1).join('').length })
    const reader = readReadyItems(client().stream(ask()))
    expect((await reader.next()).done).toBe(false)
    expect(await reader.return()).toEqual({ done: true, value: undefined })
    expect(await server().ended(0)).toBe('client_closed')
    expect(await reader.next()).toEqual({ done: true, value: undefined })
    const unread = readBatches(client().stream(ask()))
    expect(await unread.return()).toEqual({ done: true, value: undefined })
    expect(await unread.next()).toEqual({ done: true, value: undefined })
    expect(server().requests).toHaveLength(1)
  })

  test('throw() ends the stream and rejects with the value; a failed read ends the reader too', async () => {
    server().enqueue({ body: frames() })
    const reader = readBatches(client().stream(ask()))
    await reader.next()
    const odd = { not: 'an error' }
    await expect(reader.throw(odd)).rejects.toBe(odd)
    expect(await reader.next()).toEqual({ done: true, value: undefined })

    const all = frames()
    server().enqueue({ body: [...all.slice(0, 4), 'event: content_block_delta\ndata: {not json\n\n'] })
    const failing = readBatches(client().stream(ask()))
    let failure: unknown
    try {
      for (;;) if ((await failing.next()).done) break
    } catch (error) {
      failure = error
    }
    expect(failure).toMatchObject({ code: 'invalid_response' })
    expect(await failing.next()).toEqual({ done: true, value: undefined })
  })
})

describe('readReadyItems', () => {
  test('hands out the items of the stream in order, several per batch when one read holds them', async () => {
    const frames = frameFor('anthropic', fixture('anthropic', 'anthropic-text'))
    server().enqueue({ body: frames, chunks: false })
    const itemByItem = await collect(client().stream(ask()))
    server().enqueue({ body: frames, chunks: false })
    const batches: StreamItem[][] = []
    for await (const ready of readReadyItems(client().stream(ask()))) batches.push([...ready])
    expect(batches.flat()).toEqual(itemByItem)
    expect(batches.length).toBeLessThan(itemByItem.length)
  })

  test('an abort while handling an item of a batch ends the response right after it, as item by item', async () => {
    const frames = frameFor('anthropic', fixture('anthropic', 'anthropic-text'))
    const readAborting = async (read: (signal: AbortSignal) => AsyncIterable<Iterable<StreamItem>>) => {
      server().enqueue({ body: frames, chunks: false })
      const controller = new AbortController()
      const items: StreamItem[] = []
      for await (const ready of read(controller.signal))
        for (const item of ready) {
          items.push(item)
          if (item.type === 'text_delta') controller.abort()
        }
      return items
    }
    const itemByItem = await readAborting(async function* (signal) {
      for await (const item of client().stream(ask(), { signal })) yield [item]
    })
    const batched = await readAborting((signal) => readReadyItems(client().stream(ask(), { signal })))
    expect(itemByItem.filter((item) => item.type === 'text_delta')).toHaveLength(1)
    expect(itemByItem.at(-1)).toMatchObject({ type: 'done', message: { stopReason: 'aborted' } })
    expect(batched).toEqual(itemByItem)
  })
})
