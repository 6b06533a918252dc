import { frameChat, frameTyped } from './framing.js'
import type { ScriptedResponse } from './server.js'

/** One piece of a scripted model response, in stream order. */
export type ScriptStep =
  /** Reasoning; on Anthropic followed by its `signature` (default `scripted-signature-<index>`). */
  | { thinking: string; signature?: string }
  | { text: string }
  /** An image the model produced, as a URL (Chat Completions `images` only). */
  | { image: string }
  /** A tool call; `arguments` is an object (sent as JSON) or JSON text as the model would write it. */
  | { toolCall: { id: string; name: string; arguments: unknown } }
  /**
   * Anthropic only: a server-tool block as the API sends it (`server_tool_use` with an `input`,
   * streamed as one JSON delta; a `*_tool_result` block without one, sent whole).
   */
  | { serverBlock: { type: string } & Record<string, unknown> }

/** A model response for {@link scriptedResponse}. */
export interface ResponseScript {
  steps: readonly ScriptStep[]
  /** The response id. Default `scripted-response`. */
  id?: string
  /** The model the response names (Anthropic `message_start`). Default `scripted-model`. */
  model?: string
  /**
   * The wire's raw stop value. Default: the api's tool-use value when a step calls a tool
   * (`tool_use`, `tool_calls`), else its normal end (`end_turn`, `stop`).
   */
  stop?: string
  /** Token counts of the response; `false` sends none (Chat Completions). Default 100 in, 20 out. */
  usage?: { inputTokens: number; outputTokens: number } | false
  /**
   * Send only the first `stallAfter` steps, then keep the connection open without ending the
   * response: a model that is still working, for tests that interrupt it at a known point.
   */
  stallAfter?: number
}

/** The apis {@link scriptedResponse} speaks. */
export type ScriptedApi = 'anthropic' | 'openai-chat' | 'openrouter'

/**
 * A scripted 200 response for the SSE test server, in `api`'s real wire format: what a model
 * streaming `script` sends, byte for byte as the provider frames it (text a word at a time, tool
 * arguments in two fragments, the stop value, usage and the terminal event). `extra` adds faults
 * or delays (`delayMs`, `resetAfterBytes`, ...). Use it instead of hand-writing wire events:
 *
 * ```ts
 * server.enqueue(scriptedResponse('anthropic', { steps: [{ text: 'Hello!' }] }))
 * ```
 */
export function scriptedResponse(
  api: ScriptedApi,
  script: ResponseScript,
  extra: ScriptedResponse = {},
): ScriptedResponse {
  const calls = script.steps.some((step) => 'toolCall' in step)
  const stalled = script.stallAfter !== undefined
  const steps = stalled ? script.steps.slice(0, script.stallAfter) : script.steps
  let frames: string[]
  switch (api) {
    case 'anthropic':
      frames = frameTyped(anthropicEvents(script, steps, calls, stalled).map((e) => JSON.stringify(e)))
      break
    case 'openai-chat':
    case 'openrouter':
      frames = frameChat(chatPayloads(script, steps, calls, stalled), { done: !stalled })
      break
    default: {
      const unknown: never = api
      throw new TypeError(`scriptedResponse: no script format for api ${JSON.stringify(unknown)}`)
    }
  }
  const response: ScriptedResponse = { body: frames, ...extra }
  if (stalled) response.stallAfterBytes = new TextEncoder().encode(frames.join('')).length
  return response
}

const DEFAULT_USAGE = { inputTokens: 100, outputTokens: 20 }

function anthropicEvents(
  script: ResponseScript,
  steps: readonly ScriptStep[],
  calls: boolean,
  stalled: boolean,
): unknown[] {
  const usage = script.usage === false ? undefined : (script.usage ?? DEFAULT_USAGE)
  const events: unknown[] = [
    {
      type: 'message_start',
      message: {
        id: script.id ?? 'scripted-response',
        type: 'message',
        role: 'assistant',
        model: script.model ?? 'scripted-model',
        content: [],
        stop_reason: null,
        usage: { input_tokens: usage?.inputTokens ?? 0, output_tokens: 1 },
      },
    },
  ]
  steps.forEach((step, index) => {
    const delta = (d: unknown) => events.push({ type: 'content_block_delta', index, delta: d })
    const start = (block: unknown) =>
      events.push({ type: 'content_block_start', index, content_block: block })
    if ('thinking' in step) {
      start({ type: 'thinking', thinking: '', signature: '' })
      for (const word of words(step.thinking)) delta({ type: 'thinking_delta', thinking: word })
      delta({ type: 'signature_delta', signature: step.signature ?? `scripted-signature-${index}` })
    } else if ('text' in step) {
      start({ type: 'text', text: '' })
      for (const word of words(step.text)) delta({ type: 'text_delta', text: word })
    } else if ('toolCall' in step) {
      const { id, name } = step.toolCall
      start({ type: 'tool_use', id, name, input: {} })
      for (const piece of halves(argumentsJson(step.toolCall.arguments)))
        delta({ type: 'input_json_delta', partial_json: piece })
    } else if ('serverBlock' in step) {
      const { input, ...block } = step.serverBlock
      start(input === undefined ? block : { ...block, input: {} })
      if (input !== undefined) delta({ type: 'input_json_delta', partial_json: JSON.stringify(input) })
    } else throw new TypeError('scriptedResponse: anthropic responses carry no images')
    events.push({ type: 'content_block_stop', index })
  })
  if (stalled) return events
  events.push({
    type: 'message_delta',
    delta: { stop_reason: script.stop ?? (calls ? 'tool_use' : 'end_turn'), stop_sequence: null },
    usage: { output_tokens: usage?.outputTokens ?? 0 },
  })
  events.push({ type: 'message_stop' })
  return events
}

function chatPayloads(
  script: ResponseScript,
  steps: readonly ScriptStep[],
  calls: boolean,
  stalled: boolean,
): string[] {
  const id = script.id ?? 'scripted-response'
  const chunk = (delta: unknown, finish: string | null = null) =>
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  const payloads = [chunk({ role: 'assistant', content: '' })]
  let callIndex = 0
  for (const step of steps) {
    if ('thinking' in step)
      for (const word of words(step.thinking)) payloads.push(chunk({ reasoning_content: word }))
    else if ('text' in step) for (const word of words(step.text)) payloads.push(chunk({ content: word }))
    else if ('image' in step)
      payloads.push(chunk({ images: [{ type: 'image_url', image_url: { url: step.image } }] }))
    else if ('serverBlock' in step)
      throw new TypeError('scriptedResponse: server-tool blocks are Anthropic only')
    else {
      const { id: callId, name } = step.toolCall
      const index = callIndex++
      payloads.push(
        chunk({ tool_calls: [{ index, id: callId, type: 'function', function: { name, arguments: '' } }] }),
      )
      for (const piece of halves(argumentsJson(step.toolCall.arguments)))
        payloads.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
    }
  }
  if (stalled) return payloads
  payloads.push(chunk({}, script.stop ?? (calls ? 'tool_calls' : 'stop')))
  const usage = script.usage === false ? undefined : (script.usage ?? DEFAULT_USAGE)
  if (usage) {
    payloads.push(
      JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        choices: [],
        usage: {
          prompt_tokens: usage.inputTokens,
          completion_tokens: usage.outputTokens,
          total_tokens: usage.inputTokens + usage.outputTokens,
        },
      }),
    )
  }
  return payloads
}

function argumentsJson(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** Text a word at a time (with its surrounding spaces), the way models stream it. */
function words(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [text]
}

/** Two non-empty fragments (one for a short text), so a test sees arguments arrive in pieces. */
function halves(json: string): string[] {
  const half = Math.ceil(json.length / 2)
  return [json.slice(0, half), json.slice(half)].filter((piece) => piece !== '')
}
