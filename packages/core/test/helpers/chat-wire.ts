import { type ScriptedResponse, type ScriptStep, scriptedResponse } from '@kode/providers/testing'

/** One piece of a scripted response, in stream order. */
export type Step = ScriptStep

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

/** A scripted 200 response streaming `script` on the Chat Completions wire, with `extra` faults or delays. */
export function chatStream(script: ResponseScript, extra: ScriptedResponse = {}): ScriptedResponse {
  const { usage } = script
  return scriptedResponse(
    'openai-chat',
    {
      id: script.id,
      steps: script.steps,
      ...(script.finish !== undefined ? { stop: script.finish } : {}),
      ...(usage !== undefined
        ? { usage: usage && { inputTokens: usage.prompt, outputTokens: usage.completion } }
        : {}),
    },
    extra,
  )
}

/**
 * A response that streams `script`'s steps and then stalls (no finish, the connection kept open),
 * so a test can interrupt it at a known point: after the last step.
 */
export function stalledChatStream(script: ResponseScript): ScriptedResponse {
  return scriptedResponse('openai-chat', {
    id: script.id,
    steps: script.steps,
    stallAfter: script.steps.length,
  })
}

/** Shorthands for steps. */
export const think = (thinking: string): Step => ({ thinking })
export const say = (text: string): Step => ({ text })
export const call = (id: string, name: string, args: unknown): Step => ({
  toolCall: { id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
})

/** A response that only says `text`. */
export function textReply(id: string, text: string, extra?: ScriptedResponse): ScriptedResponse {
  return chatStream({ id, steps: [say(text)] }, extra)
}
