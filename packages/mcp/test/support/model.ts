import { frameChat, type ScriptedResponse } from '@kode/providers/testing'

/** One piece of a scripted Chat Completions response: text, or a tool call. */
export type Step = { text: string } | { call: { id: string; name: string; args: unknown } }

export const say = (text: string): Step => ({ text })
export const call = (id: string, name: string, args: unknown = {}): Step => ({ call: { id, name, args } })

/**
 * A scripted model response as the OpenAI Chat Completions wire streams it: text deltas, each tool
 * call as a start chunk and its arguments, the finish chunk and a usage chunk.
 */
export function response(id: string, ...steps: Step[]): ScriptedResponse {
  const chunk = (delta: unknown, finish: string | null = null) =>
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  const payloads = [chunk({ role: 'assistant', content: '' })]
  let index = 0
  for (const step of steps) {
    if ('text' in step) payloads.push(chunk({ content: step.text }))
    else {
      const { id: callId, name, args } = step.call
      payloads.push(
        chunk({
          tool_calls: [
            {
              index: index++,
              id: callId,
              type: 'function',
              function: { name, arguments: JSON.stringify(args) },
            },
          ],
        }),
      )
    }
  }
  payloads.push(chunk({}, index > 0 ? 'tool_calls' : 'stop'))
  payloads.push(
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      choices: [],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    }),
  )
  return { body: frameChat(payloads) }
}
