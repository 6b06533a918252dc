import { type ScriptedResponse, type ScriptStep, scriptedResponse } from '@kode/providers/testing'

/** One content block of a scripted Anthropic Messages response. */
export type Block =
  | { thinking: string; signature: string }
  | { text: string }
  | { toolUse: { id: string; name: string; input: unknown } }
  /** A server-tool block (`server_tool_use` with its input streamed, or a result sent whole). */
  | { server: { type: string } & Record<string, unknown> }

/**
 * A scripted Anthropic Messages stream: `message_start`, each block as start / deltas / stop
 * (thinking with its signature delta, text a word at a time, tool input JSON in two fragments),
 * then `message_delta` with the stop reason and usage (50 in, 30 out), and `message_stop`.
 */
export function anthropicStream(id: string, blocks: readonly Block[]): ScriptedResponse {
  const steps = blocks.map((block): ScriptStep => {
    if ('server' in block) return { serverBlock: block.server }
    if (!('toolUse' in block)) return block
    const { id: callId, name, input } = block.toolUse
    return { toolCall: { id: callId, name, arguments: input } }
  })
  return scriptedResponse('anthropic', {
    id,
    model: 'claude-sonnet-4-5',
    steps,
    usage: { inputTokens: 50, outputTokens: 30 },
  })
}
