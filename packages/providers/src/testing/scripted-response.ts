import { frameChat, frameGoogle, frameTyped } from './framing.js'
import type { ResponseScript } from './script.js'
import { anthropicEvents } from './scripts/anthropic.js'
import { chatPayloads } from './scripts/chat.js'
import { googleChunks } from './scripts/google.js'
import { responsesEvents } from './scripts/responses.js'
import type { ScriptedResponse } from './server.js'

/** The apis {@link scriptedResponse} speaks. */
export type ScriptedApi = 'anthropic' | 'openai-chat' | 'openrouter' | 'google' | 'openai-responses'

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
    case 'google':
      frames = frameGoogle(googleChunks(script, steps, stalled))
      break
    case 'openai-responses':
      frames = frameTyped(responsesEvents(script, steps, stalled).map((e) => JSON.stringify(e)))
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
