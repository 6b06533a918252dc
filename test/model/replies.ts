// Scripted model responses for tests across the workspace (durable-dbos's workers, the web
// example's crash test): Chat Completions streams as the scripted SSE server sends them.
import { type ScriptedResponse, scriptedResponse } from '@kode/providers/testing'

/** A Chat Completions response that says `text`. */
export const reply = (id: string, text: string): ScriptedResponse =>
  scriptedResponse('openai-chat', { id, steps: [{ text }] })

/** A Chat Completions response that calls tools, in order. */
export const callTools = (
  id: string,
  calls: { id: string; name: string; args: unknown }[],
): ScriptedResponse =>
  scriptedResponse('openai-chat', {
    id,
    steps: calls.map((call) => ({
      toolCall: { id: call.id, name: call.name, arguments: JSON.stringify(call.args) },
    })),
  })
