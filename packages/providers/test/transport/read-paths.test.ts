import type { StreamItem } from '@kode/protocol'
import { createClient, readBatches, readReadyItems } from '@kode/providers'
import { type FramedApi, frameFor } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, collect, deterministic } from '../helpers.js'

// Every way of reading a stream (item by item, `readBatches`, `readReadyItems`, several `next()`
// calls at once) hands out the same items, whatever the network's chunk boundaries: items that
// sit ready are handed out on a fast path, and that path must not change what a reader sees.

/** Text with one-, two-, three- and four-byte UTF-8 characters, so cuts fall inside characters. */
const PIECES = ['Caf', 'é', ' “quoted”', ' 𝄞 clef', ' \\ "json"\n', ' €42', ' done']

const PAYLOADS: Record<'openai-chat' | 'anthropic', string[]> = {
  'openai-chat': [
    ...PIECES.map((text) =>
      JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] }),
    ),
    JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
  ],
  anthropic: [
    JSON.stringify({ type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: 3 } } }),
    JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...PIECES.map((text) =>
      JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
    ),
    JSON.stringify({ type: 'content_block_stop', index: 0 }),
    JSON.stringify({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn' },
      usage: { output_tokens: 7 },
    }),
    JSON.stringify({ type: 'message_stop' }),
  ],
}

/** A client whose every response is `bytes`, cut at `cuts`. */
function clientServing(api: FramedApi, bytes: Uint8Array, cuts: number[] = []) {
  const bounds = [0, ...cuts, bytes.length]
  const fetch = async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 1; i < bounds.length; i++) controller.enqueue(bytes.slice(bounds[i - 1], bounds[i]))
          controller.close()
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    )
  return createClient({ api, model: 'm', baseUrl: 'http://fake', fetch, ...deterministic() })
}

async function viaBatches(stream: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const items: StreamItem[] = []
  for await (const batch of readBatches(stream)) items.push(...batch)
  return items
}

async function viaReadyItems(stream: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const items: StreamItem[] = []
  for await (const ready of readReadyItems(stream)) for (const item of ready) items.push(item)
  return items
}

/** Asks for three items at a time without waiting in between. */
async function viaConcurrentNext(iterable: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const stream = iterable[Symbol.asyncIterator]()
  const items: StreamItem[] = []
  for (;;) {
    const results = await Promise.all([stream.next(), stream.next(), stream.next()])
    for (const result of results) if (!result.done) items.push(result.value)
    if (results.some((result) => result.done)) return items
  }
}

describe.each(['openai-chat', 'anthropic'] as const)('%s', (api) => {
  const bytes = new TextEncoder().encode(frameFor(api, PAYLOADS[api]).join(''))

  test('every reader gets the same items with a cut at every byte, inside characters too', async () => {
    const expected = await collect(clientServing(api, bytes).stream(ask()))
    expect(expected.at(-1)).toMatchObject({
      type: 'done',
      message: { stopReason: 'stop', parts: [{ type: 'text', text: PIECES.join('') }] },
    })
    for (let cut = 1; cut < bytes.length; cut++) {
      // A client per read: each numbers its messages from the start.
      const stream = () => clientServing(api, bytes, [cut]).stream(ask())
      expect(await collect(stream())).toEqual(expected)
      expect(await viaBatches(stream())).toEqual(expected)
      expect(await viaReadyItems(stream())).toEqual(expected)
      expect(await viaConcurrentNext(stream())).toEqual(expected)
    }
  }, 60_000) // four client runs per byte: seconds on a loaded machine, not a speed check

  test('one byte per read gives the same items', async () => {
    const expected = await collect(clientServing(api, bytes).stream(ask()))
    const everyByte = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)
    expect(await collect(clientServing(api, bytes, everyByte).stream(ask()))).toEqual(expected)
    expect(await viaBatches(clientServing(api, bytes, everyByte).stream(ask()))).toEqual(expected)
  })

  test('an abort through a signal derived from the caller’s ends the response right after the item in hand', async () => {
    // Every event arrives in one read, so the items after the first are ready when the abort comes.
    const controller = new AbortController()
    const signal = AbortSignal.any([controller.signal])
    const seen: StreamItem[] = []
    for await (const item of clientServing(api, bytes).stream(ask(), { signal })) {
      seen.push(item)
      if (item.type === 'text_delta' && seen.filter((i) => i.type === 'text_delta').length === 2)
        controller.abort()
    }
    const deltas = seen.filter((item) => item.type === 'text_delta')
    expect(deltas.map((item) => item.type === 'text_delta' && item.text)).toEqual(PIECES.slice(0, 2))
    const done = seen.at(-1)
    expect(done).toMatchObject({ type: 'done', message: { stopReason: 'aborted' } })
    expect(done?.type === 'done' && done.message.parts).toEqual([
      { type: 'text', text: PIECES.slice(0, 2).join('') },
    ])
  })

  test('an abort in the middle of a readReadyItems batch stops there; readBatches stops after its batch', async () => {
    const read = async (batches: boolean) => {
      const controller = new AbortController()
      const stream = clientServing(api, bytes).stream(ask(), { signal: controller.signal })
      const items: StreamItem[] = []
      const reader = batches ? readBatches(stream) : readReadyItems(stream)
      for await (const batch of reader)
        for (const item of batch) {
          items.push(item)
          if (item.type === 'text_delta' && item.text === PIECES[2]) controller.abort()
        }
      return items
    }
    const ready = await read(false)
    expect(ready.filter((item) => item.type === 'text_delta')).toHaveLength(3)
    expect(ready.at(-1)).toMatchObject({ type: 'done', message: { stopReason: 'aborted' } })
    // A batch is taken whole before it is handed out: the abort ends the response after it.
    const batched = await read(true)
    expect(batched.filter((item) => item.type === 'text_delta')).toHaveLength(PIECES.length)
    expect(batched.at(-1)).toMatchObject({ type: 'done', message: { stopReason: 'aborted' } })
  })
})
