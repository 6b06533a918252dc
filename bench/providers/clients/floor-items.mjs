// The floor with the one thing every streaming API built on async iteration must add: each delta
// handed to the caller as an item of its own through `for await`. The reading, parsing and
// keeping are the floor's (the same `READ` per wire); the items are the smallest that can say
// what arrived, and the iterator is the least `for await` allows: a queue of decoded events, a
// `next()` that maps the next one and returns `Promise.resolve` of a fresh result, a network
// read only when the queue is empty. Its cost over the floor is what the item-by-item contract
// costs any library (Kode's `client.stream`, the AI SDK's `fullStream`, pi-ai's stream), before
// any library code runs.
import { createParser } from 'eventsource-parser'
import { floorResult, prepare as prepareFloor, READ } from './floor.mjs'

const DONE = Object.freeze({ done: true, value: undefined })

/** The floor's read of `body` as an async iterator of one `{ type, index }` item per delta. */
function floorItems(wire, body, out) {
  const read = READ[wire]
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const queue = []
  let head = 0
  let ended = false
  const parser = createParser({
    onEvent(event) {
      queue.push(event.data)
    },
  })
  /** The next delta's item from the events already decoded; `undefined` when they run out. */
  const take = () => {
    while (head < queue.length) {
      const data = queue[head]
      queue[head++] = undefined
      if (data === '[DONE]') continue
      const before = out.deltas
      read(JSON.parse(data), out)
      if (out.deltas !== before) return { type: 'delta', index: before }
    }
    queue.length = 0
    head = 0
    return undefined
  }
  const pull = async () => {
    for (;;) {
      const item = take()
      if (item !== undefined) return { done: false, value: item }
      if (ended) return DONE
      const chunk = await reader.read()
      if (chunk.done) {
        parser.feed(decoder.decode())
        ended = true
      } else {
        parser.feed(decoder.decode(chunk.value, { stream: true }))
      }
    }
  }
  return {
    [Symbol.asyncIterator]() {
      return this
    },
    next() {
      const item = take()
      return item !== undefined ? Promise.resolve({ done: false, value: item }) : pull()
    },
  }
}

/** Reads a whole `wire` stream item by item, as a `for await` consumer would. */
export async function readFloorItems(wire, body) {
  const out = { text: '', calls: [], deltas: 0 }
  let items = 0
  for await (const item of floorItems(wire, body, out)) if (item.index === items) items++
  if (items !== out.deltas) throw new Error(`${items} items for ${out.deltas} deltas`)
  return floorResult(out)
}

/** Prepares one request read item by item: resolves to the function that runs it. */
export function prepare(setup) {
  return prepareFloor(setup, readFloorItems)
}
