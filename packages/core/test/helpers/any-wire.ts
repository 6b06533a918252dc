import { type FramedApi, frameFor, type ScriptedResponse, scriptedResponse } from '@kode/providers/testing'

/** The five built-in apis, each with a model of the catalog. */
export const APIS = [
  { api: 'openai-chat', model: 'gpt-4o' },
  { api: 'openrouter', model: 'openai/gpt-4o' },
  { api: 'anthropic', model: 'claude-sonnet-4-5' },
  { api: 'google', model: 'gemini-2.5-flash' },
  { api: 'openai-responses', model: 'gpt-5' },
] as const satisfies readonly { api: FramedApi; model: string }[]

/** A response that only says `text`, in the wire format of `api`. */
export function textReplyFor(api: FramedApi, id: string, text: string): ScriptedResponse {
  if (api === 'openai-chat' || api === 'openrouter') return scriptedResponse(api, { id, steps: [{ text }] })
  return {
    body: frameFor(
      api,
      payloadsFor(api, id, text).map((p) => JSON.stringify(p)),
    ),
  }
}

function payloadsFor(api: 'anthropic' | 'google' | 'openai-responses', id: string, text: string): unknown[] {
  switch (api) {
    case 'anthropic':
      return [
        {
          type: 'message_start',
          message: { id, type: 'message', role: 'assistant', content: [], usage: { input_tokens: 10 } },
        },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } },
        { type: 'message_stop' },
      ]
    case 'google':
      return [
        {
          responseId: id,
          candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
        },
      ]
    case 'openai-responses':
      return [
        { type: 'response.created', response: { id } },
        {
          type: 'response.output_item.added',
          output_index: 0,
          item: { type: 'message', id: 'msg_1', role: 'assistant', content: [] },
        },
        { type: 'response.output_text.delta', output_index: 0, delta: text },
        {
          type: 'response.output_item.done',
          output_index: 0,
          item: { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text }] },
        },
        {
          type: 'response.completed',
          response: { id, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } },
        },
      ]
    default: {
      const unknown: never = api
      throw new Error(`no script for ${String(unknown)}`)
    }
  }
}
