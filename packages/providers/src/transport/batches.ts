import type { StreamItem } from '@kode/protocol'
import { ResponseStream } from './response-stream.js'

/**
 * Reads a stream in batches: each batch holds the next item and every item after it that is
 * ready without waiting for the network (the rest of the events one read decoded). The items,
 * their order and their objects are those of `for await (const item of stream)`; only the
 * grouping differs, so a consumer pays one async-iterator turn per batch instead of per item.
 * A stream not made by `client.stream` is read item by item, each in a batch of one. Errors and
 * aborts surface as they do item by item, after the items before them. Breaking out of the loop
 * cancels the request, as with the stream itself.
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
  try {
    for (;;) {
      const first = await stream.next()
      if (first.done) return
      const batch = [first.value]
      for (let item = stream.takeSync(); item !== undefined; item = stream.takeSync()) batch.push(item)
      yield batch
    }
  } finally {
    await stream.return()
  }
}
