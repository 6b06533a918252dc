// A diagnostic row, not a peer: the floor's loop with the least that a runtime of this kind must
// add, and nothing of a library. The stream is read through eventsource-parser (the transport
// the architecture fixes, where the floor has a ten-line reader), every delta, tool call, tool
// result and turn boundary is handed to the caller as an event through `for await` (a run is an
// async iterable of events), and each message is written as a JSON line before the loop goes on
// (the history is persisted as it grows). No validation, no typed parts, no request building
// beyond the floor's. Its cost over the floor is the cost of those contracts themselves; Kode's
// cost over it is what Kode does beyond them.
import { createParser } from 'eventsource-parser'
import { PROMPT, SYSTEM } from '../task.mjs'
import { assistantMessage, floorTools, requestTurn } from './floor.mjs'

const DONE = Object.freeze({ done: true, value: undefined })

/** The least async-iterable event queue: a buffered event is one `Promise.resolve`. */
function eventQueue() {
  const buffered = []
  let head = 0
  let waiting
  let ended = false
  return {
    push(event) {
      if (waiting) {
        const resolve = waiting
        waiting = undefined
        resolve({ done: false, value: event })
      } else buffered.push(event)
    },
    end() {
      ended = true
      if (waiting) waiting(DONE)
    },
    [Symbol.asyncIterator]() {
      return this
    },
    next() {
      if (head < buffered.length) {
        const event = buffered[head]
        buffered[head++] = undefined
        if (head === buffered.length) buffered.length = head = 0
        return Promise.resolve({ done: false, value: event })
      }
      if (ended) return Promise.resolve(DONE)
      return new Promise((resolve) => {
        waiting = resolve
      })
    },
  }
}

/** Reads one streamed response, handing out an event per delta: its text and its tool calls. */
async function readResponse(body, emit) {
  const decoder = new TextDecoder()
  let text = ''
  const calls = []
  const parser = createParser({
    onEvent({ data }) {
      if (data === '[DONE]') return
      const delta = JSON.parse(data).choices[0]?.delta
      if (!delta) return
      if (delta.content) {
        text += delta.content
        emit({ type: 'text_delta', text: delta.content })
      }
      for (const call of delta.tool_calls ?? []) {
        if (call.id) calls[call.index] = { id: call.id, name: call.function.name, json: '' }
        const fragment = call.function?.arguments
        if (fragment) {
          calls[call.index].json += fragment
          emit({ type: 'tool_call_delta', index: call.index, fragment })
        }
      }
    },
  })
  for await (const bytes of body) parser.feed(decoder.decode(bytes, { stream: true }))
  parser.feed(decoder.decode())
  return { text, calls: calls.filter(Boolean) }
}

/** Prepares the task: resolves to the function that runs it. */
export async function prepare(setup) {
  const url = `${setup.origin}/v1/chat/completions`
  const tools = floorTools(setup)
  const loop = async (events, log) => {
    const messages = [{ role: 'system', content: SYSTEM }]
    const persist = (message) => {
      log.push(JSON.stringify(message))
      messages.push(message)
    }
    persist({ role: 'user', content: PROMPT })
    for (let turn = 1; turn <= setup.maxTurns; turn++) {
      events.push({ type: 'turn_start', turn })
      const body = await requestTurn(url, messages)
      const { text, calls } = await readResponse(body, (event) => events.push(event))
      if (calls.length === 0) {
        persist({ role: 'assistant', content: text })
        events.push({ type: 'turn_end', turn })
        return text
      }
      persist(assistantMessage(text, calls))
      const results = await Promise.all(calls.map((call) => tools[call.name](JSON.parse(call.json))))
      for (const [i, call] of calls.entries()) {
        persist({ role: 'tool', tool_call_id: call.id, content: results[i] })
        events.push({ type: 'tool_result', id: call.id, output: results[i] })
      }
      events.push({ type: 'turn_end', turn })
    }
    throw new Error(`no answer within ${setup.maxTurns} turns`)
  }
  return async () => {
    const events = eventQueue()
    const log = []
    const done = loop(events, log).finally(() => events.end())
    // Its failure is awaited after the events end; until then it is not unhandled.
    done.catch(() => {})
    let count = 0
    for await (const _ of events) count++
    return { finalText: await done, events: count }
  }
}
