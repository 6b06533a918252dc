import { type ScriptedResponse, scriptedResponse } from '@kode/providers/testing'

/** One piece of a scripted Chat Completions response: text, or a tool call. */
export type Step = { text: string } | { call: { id: string; name: string; args: unknown } }

export const say = (text: string): Step => ({ text })
export const call = (id: string, name: string, args: unknown = {}): Step => ({ call: { id, name, args } })

/** A scripted model response on the OpenAI Chat Completions wire, its steps streamed in order. */
export function response(id: string, ...steps: Step[]): ScriptedResponse {
  return scriptedResponse('openai-chat', {
    id,
    steps: steps.map((step) =>
      'text' in step
        ? step
        : { toolCall: { id: step.call.id, name: step.call.name, arguments: step.call.args } },
    ),
  })
}
