import type { ScriptedResponse } from '@kode/providers/testing'
import { frameChat } from '@kode/providers/testing'

/** One piece of a scripted response, in stream order. */
export type Step =
  | { thinking: string }
  | { text: string }
  | { image: string }
  | { call: { id: string; name: string; args: string } }

/** A model response as the OpenAI Chat Completions wire streams it. */
export interface ResponseScript {
  /** The response id (`chatcmpl-...`). */
  id: string
  steps: readonly Step[]
  /** `finish_reason`; default `tool_calls` when the script calls tools, else `stop`. */
  finish?: string
  /** Token counts of the final usage chunk; `false` sends none. Default 100 in, 20 out. */
  usage?: { prompt: number; completion: number } | false
}

/**
 * The `data:` payloads of a scripted Chat Completions stream: reasoning in `reasoning_content`
 * deltas, text in `content` deltas (a word at a time), each tool call as a start chunk and two
 * argument fragments, then the finish chunk and a usage-only chunk.
 */
export function chatPayloads(script: ResponseScript): string[] {
  const chunk = (delta: unknown, finish: string | null = null) =>
    JSON.stringify({
      id: script.id,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  const payloads = [chunk({ role: 'assistant', content: '' })]
  let callIndex = 0
  for (const step of script.steps) {
    if ('thinking' in step)
      for (const word of words(step.thinking)) payloads.push(chunk({ reasoning_content: word }))
    else if ('text' in step) for (const word of words(step.text)) payloads.push(chunk({ content: word }))
    else if ('image' in step)
      payloads.push(chunk({ images: [{ type: 'image_url', image_url: { url: step.image } }] }))
    else {
      const { id, name, args } = step.call
      const index = callIndex++
      payloads.push(
        chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] }),
      )
      const half = Math.ceil(args.length / 2)
      for (const piece of [args.slice(0, half), args.slice(half)]) {
        if (piece) payloads.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
      }
    }
  }
  const finish = script.finish ?? (callIndex > 0 ? 'tool_calls' : 'stop')
  payloads.push(chunk({}, finish))
  const usage = script.usage ?? { prompt: 100, completion: 20 }
  if (usage) {
    payloads.push(
      JSON.stringify({
        id: script.id,
        object: 'chat.completion.chunk',
        choices: [],
        usage: {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
        },
      }),
    )
  }
  return payloads
}

/** A scripted 200 response streaming `script`, with `extra` faults or delays. */
export function chatStream(script: ResponseScript, extra: ScriptedResponse = {}): ScriptedResponse {
  return { body: frameChat(chatPayloads(script)), ...extra }
}

/**
 * A response that streams `script`'s steps and then stalls (no finish, the connection kept open),
 * so a test can interrupt it at a known point: after the last step.
 */
export function stalledChatStream(script: ResponseScript): ScriptedResponse {
  const payloads = chatPayloads({ ...script, usage: false }).slice(0, -1)
  const body = frameChat(payloads, { done: false })
  return { body, stallAfterBytes: Buffer.byteLength(body.join('')) }
}

/** Shorthands for steps. */
export const think = (thinking: string): Step => ({ thinking })
export const say = (text: string): Step => ({ text })
export const call = (id: string, name: string, args: unknown): Step => ({
  call: { id, name, args: typeof args === 'string' ? args : JSON.stringify(args) },
})

/** A response that only says `text`. */
export function textReply(id: string, text: string, extra?: ScriptedResponse): ScriptedResponse {
  return chatStream({ id, steps: [say(text)] }, extra)
}

function words(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [text]
}
