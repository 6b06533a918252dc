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
export function readBatches(
  stream: AsyncIterable<StreamItem>,
): AsyncGenerator<StreamItem[], void, undefined> {
  if (!(stream instanceof ResponseStream)) return oneByOne(stream)
  return new BatchReader(stream, readyBatch)
}

/**
 * `first` and every item `stream` has ready. A plain function of its own: it runs once per item,
 * and V8 optimizes it apart from the reader's turn, which runs once per batch.
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
export function readReadyItems(
  stream: AsyncIterable<StreamItem>,
): AsyncGenerator<Iterable<StreamItem>, void, undefined> {
  if (!(stream instanceof ResponseStream)) return oneByOne(stream)
  return new BatchReader(stream, readyItems)
}

/** `first`, then each item `stream` has ready, taken as asked for. */
function readyItems(first: StreamItem, stream: ResponseStream): Iterable<StreamItem> {
  return new ReadyItems(first, stream)
}

/** Any other stream, item by item, each in a batch of one. */
async function* oneByOne(stream: AsyncIterable<StreamItem>): AsyncGenerator<StreamItem[], void, undefined> {
  for await (const item of stream) yield [item]
}

const DONE: IteratorResult<never, void> = Object.freeze({ done: true, value: undefined })

/**
 * The batches of a `ResponseStream`, as the generator `for (;;) yield batch(await stream.next())`
 * with `finally { await stream.return() }` gives them, written out: this runs once per batch, and
 * V8 compiles a hand-written iterator at a fraction of an async generator's cost. A call made
 * while another is pending waits for it, as with a generator.
 */
class BatchReader<B> implements AsyncGenerator<B, void, undefined> {
  readonly #stream: ResponseStream
  readonly #batch: (first: StreamItem, stream: ResponseStream) => B
  #done = false
  #busy = false
  readonly #waiting: (() => void)[] = []

  constructor(stream: ResponseStream, batch: (first: StreamItem, stream: ResponseStream) => B) {
    this.#stream = stream
    this.#batch = batch
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return()
  }

  next(): Promise<IteratorResult<B, void>> {
    return this.#busy ? this.#later(() => this.#next()) : this.#next()
  }

  /** Ends the stream (cancelling the request if it is still open), as leaving a loop over it does. */
  return(): Promise<IteratorResult<B, void>> {
    return this.#busy ? this.#later(() => this.#return()) : this.#return()
  }

  /** Ends the stream, then rejects with `error`, as a generator thrown into at its `yield` does. */
  throw(error: unknown): Promise<IteratorResult<B, void>> {
    return this.#busy ? this.#later(() => this.#throw(error)) : this.#throw(error)
  }

  async #next(): Promise<IteratorResult<B, void>> {
    this.#busy = true
    try {
      if (this.#done) return DONE
      let first: IteratorResult<StreamItem>
      try {
        first = await this.#stream.next()
      } catch (error) {
        await this.#close()
        throw error
      }
      if (first.done) {
        await this.#close()
        return DONE
      }
      return { done: false, value: this.#batch(first.value, this.#stream) }
    } finally {
      this.#idle()
    }
  }

  async #return(): Promise<IteratorResult<B, void>> {
    this.#busy = true
    try {
      await this.#close()
      return DONE
    } finally {
      this.#idle()
    }
  }

  async #throw(error: unknown): Promise<IteratorResult<B, void>> {
    this.#busy = true
    try {
      await this.#close()
    } finally {
      this.#idle()
    }
    throw error
  }

  async #close(): Promise<void> {
    if (this.#done) return
    this.#done = true
    await this.#stream.return()
  }

  /** The call is over: the next one waiting, if any, starts. */
  #idle(): void {
    this.#busy = false
    this.#waiting.shift()?.()
  }

  #later(call: () => Promise<IteratorResult<B, void>>): Promise<IteratorResult<B, void>> {
    return new Promise((resolve, reject) => this.#waiting.push(() => call().then(resolve, reject)))
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
