// The floor: what reading these streams costs with nothing but fetch, eventsource-parser and
// JSON.parse of every payload. It keeps only what the result needs (text, tool name, argument
// text), so any client's cost above it is the client's own work.
import { createParser } from 'eventsource-parser'
import { TOOL } from '../scenarios.mjs'
import { apiRoot } from './api-root.mjs'

const URL_PATH = {
  'openai-chat': () => '/chat/completions',
  anthropic: () => '/messages',
  google: (model) => `/models/${model}:streamGenerateContent?alt=sse`,
  'openai-responses': () => '/responses',
}

/** Per wire: what one parsed payload adds to the result. */
export const READ = {
  'openai-chat'(payload, out) {
    const delta = payload.choices[0]?.delta
    if (!delta) return
    if (delta.content) {
      out.text += delta.content
      out.deltas++
    }
    for (const call of delta.tool_calls ?? []) {
      if (call.id) out.calls[call.index] = { name: call.function.name, json: '' }
      if (call.function?.arguments) {
        out.calls[call.index].json += call.function.arguments
        out.deltas++
      }
    }
  },
  anthropic(payload, out) {
    if (payload.type === 'content_block_start' && payload.content_block.type === 'tool_use') {
      out.calls[payload.index] = { name: payload.content_block.name, json: '' }
    } else if (payload.type === 'content_block_delta') {
      const { delta } = payload
      if (delta.type === 'text_delta') {
        out.text += delta.text
        out.deltas++
      } else if (delta.type === 'input_json_delta' && delta.partial_json) {
        out.calls[payload.index].json += delta.partial_json
        out.deltas++
      }
    }
  },
  google(payload, out) {
    for (const part of payload.candidates?.[0]?.content?.parts ?? []) {
      if (part.text) {
        out.text += part.text
        out.deltas++
      }
      const call = part.functionCall
      if (!call) continue
      if (call.name) out.calls.push({ name: call.name, json: call.args ? JSON.stringify(call.args) : '' })
      // Streamed arguments: string pieces under a top-level JSON path (all this scenario sends).
      for (const arg of call.partialArgs ?? []) {
        if (!arg.stringValue) continue
        const current = out.calls.at(-1)
        current.values ??= {}
        const values = current.values
        const key = arg.jsonPath.slice(2)
        values[key] = (values[key] ?? '') + arg.stringValue
        out.deltas++
      }
    }
  },
  'openai-responses'(payload, out) {
    if (payload.type === 'response.output_text.delta') {
      out.text += payload.delta
      out.deltas++
    } else if (payload.type === 'response.output_item.added' && payload.item.type === 'function_call') {
      out.calls[payload.output_index] = { name: payload.item.name, json: '' }
    } else if (payload.type === 'response.function_call_arguments.delta') {
      out.calls[payload.output_index].json += payload.delta
      out.deltas++
    }
  },
}

/**
 * Reads a whole `wire` stream from `body`; resolves to the text, the tool calls and how many
 * non-empty text or argument deltas arrived.
 */
export async function readFloor(wire, body) {
  const read = READ[wire]
  const out = { text: '', calls: [], deltas: 0 }
  const parser = createParser({
    onEvent(event) {
      if (event.data !== '[DONE]') read(JSON.parse(event.data), out)
    },
  })
  const decoder = new TextDecoder()
  for await (const bytes of body) parser.feed(decoder.decode(bytes, { stream: true }))
  parser.feed(decoder.decode())
  return floorResult(out)
}

/** What a floor read resolves to, from what its payloads added to `out`. */
export function floorResult(out) {
  return {
    text: out.text,
    toolCalls: out.calls
      .filter(Boolean)
      .map((call) => ({ name: call.name, args: call.values ?? JSON.parse(call.json || '{}') })),
    deltas: out.deltas,
  }
}

/**
 * Prepares one floor request: resolves to the function that runs it, reading the body with
 * `read` (the floor's own reader unless another floor variant passes its own).
 */
export async function prepare({ wire, origin, scenario }, read = readFloor) {
  const model = 'bench-model'
  const url = apiRoot(origin, scenario, wire) + URL_PATH[wire](model)
  const body = JSON.stringify({
    model,
    stream: true,
    messages: [{ role: 'user', content: 'hi' }],
    tools: [{ type: 'function', function: TOOL }],
  })
  return async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
      body,
    })
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`)
    return read(wire, response.body)
  }
}
