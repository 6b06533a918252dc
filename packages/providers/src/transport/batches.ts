import type { StreamItem } from '@kode/protocol'
import { ResponseStream } from './response-stream.js'

/**
 * Reads a stream in batches: each batch holds the next item and every item after it that is
 * ready without waiting for the network (the rest of the events one read decoded). The items,
 * their order and their objects are those of `for await (const item of stream)`; only the
 * grouping differs, so a consumer pays one async-iterator turn per batch instead of per item.
 * A stream not made by `client.stream` is read item by item, each in a batch of one. Errors and
 * aborts surface as they do item by item, after the items before them. Breaking out of the loop
 * cancels the request, as with the stream itself. A batch is taken whole before you see it: a
 * consumer that aborts while handling one, and must stop exactly where item by item would,
 * reads with `readReadyItems`.
 *
 * @example
 * for await (const batch of readBatches(client.stream(request))) {
 *   for (const item of batch) if (item.type === 'text_delta') process.stdout.write(item.text)
 * }
 */
export async function* readBatches(
  stream: AsyncIterable<StreamItem>,
): AsyncGenerator<StreamItem[], void, undefined> {
  if (!(stream instanceof ResponseStream)) {
    for await (const item of stream) yield [item]
    return
  }
  // One generator turn per batch; the items after the first are taken with plain calls.
  try {
    for (;;) {
      const first = await stream.next()
      if (first.done) return
      yield readyBatch(first.value, stream)
    }
  } finally {
    await stream.return()
  }
}

/**
 * `first` and every item `stream` has ready. A plain function, not the generator's own loop: a
 * loop in an async generator runs unoptimized (it is resumed once per batch, and V8 does not
 * optimize it in the middle of its loop), and this one runs once per item.
 */
function readyBatch(first: StreamItem, stream: ResponseStream): StreamItem[] {
  const batch = [first]
  for (let item = stream.takeSync(); item !== undefined; item = stream.takeSync()) batch.push(item)
  return batch
}

/**
 * Reads a stream as `readBatches` does, but each batch is taken from the stream one item at a
 * time as you iterate it, so a batch behaves exactly like item by item: an abort while you
 * handle an item ends the response right after it (the next item is the aborted `done`, its
 * message holding what was handed out), and the response's final message holds no more than
 * the items taken. Items of a batch you leave unread come first in the next one. Iterate each
 * batch before asking for the next.
 *
 * @example
 * for await (const ready of readReadyItems(client.stream(request, { signal }))) {
 *   for (const item of ready) if (item.type === 'text_delta') process.stdout.write(item.text)
 * }
 */
export async function* readReadyItems(
  stream: AsyncIterable<StreamItem>,
): AsyncGenerator<Iterable<StreamItem>, void, undefined> {
  if (!(stream instanceof ResponseStream)) {
    for await (const item of stream) yield [item]
    return
  }
  try {
    for (;;) {
      const first = await stream.next()
      if (first.done) return
      yield new ReadyItems(first.value, stream)
    }
  } finally {
    await stream.return()
  }
}

/**
 * `first`, then each item the stream has ready, taken only when asked for. A plain iterator rather
 * than a generator: this runs once per item.
 */
class ReadyItems implements Iterable<StreamItem>, Iterator<StreamItem, undefined> {
  private first: StreamItem | undefined

  constructor(
    first: StreamItem,
    private readonly stream: ResponseStream,
  ) {
    this.first = first
  }

  [Symbol.iterator](): this {
    return this
  }

  next(): IteratorResult<StreamItem, undefined> {
    const first = this.first
    if (first !== undefined) {
      this.first = undefined
      return { done: false, value: first }
    }
    const item = this.stream.takeSync()
    return item === undefined ? { done: true, value: undefined } : { done: false, value: item }
  }
}
