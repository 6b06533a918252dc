import { type ScriptedApi, type ScriptedResponse, scriptedResponse } from '@kode/providers/testing'

/** The five built-in apis, each with a model of the catalog. */
export const APIS = [
  { api: 'openai-chat', model: 'gpt-4o' },
  { api: 'openrouter', model: 'openai/gpt-4o' },
  { api: 'anthropic', model: 'claude-sonnet-4-5' },
  { api: 'google', model: 'gemini-2.5-flash' },
  { api: 'openai-responses', model: 'gpt-5' },
] as const satisfies readonly { api: ScriptedApi; model: string }[]

/** A response that only says `text`, in the wire format of `api`. */
export function textReplyFor(api: ScriptedApi, id: string, text: string): ScriptedResponse {
  return scriptedResponse(api, { id, steps: [{ text }], usage: { inputTokens: 10, outputTokens: 5 } })
}
