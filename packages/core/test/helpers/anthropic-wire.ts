import { frameTyped, type ScriptedResponse, type ScriptStep, scriptedResponse } from '@kode/providers/testing'

/** One content block of a scripted Anthropic Messages response. */
export type Block =
  | { thinking: string; signature: string }
  | { text: string }
  | { toolUse: { id: string; name: string; input: unknown } }
  /** A server-tool block (`server_tool_use` with its input streamed, or a result sent whole). */
  | { server: { type: string } & Record<string, unknown> }

/** How a scripted response ends, beyond its blocks. */
export interface StreamEnd {
  /** The raw `stop_reason` (default: `tool_use` with a client call, else `end_turn`). */
  stop?: string
  /** The code-execution `container` the response's `message_delta` names. */
  container?: { id: string; expires_at: string }
}

/**
 * A scripted Anthropic Messages stream: `message_start`, each block as start / deltas / stop
 * (thinking with its signature delta, text a word at a time, tool input JSON in two fragments),
 * then `message_delta` with the stop reason (and `container`, if given) and usage (50 in, 30 out),
 * and `message_stop`.
 */
export function anthropicStream(id: string, blocks: readonly Block[], end: StreamEnd = {}): ScriptedResponse {
  const steps = blocks.map((block): ScriptStep => {
    if ('server' in block) return { serverBlock: block.server }
    if (!('toolUse' in block)) return block
    const { id: callId, name, input } = block.toolUse
    return { toolCall: { id: callId, name, arguments: input } }
  })
  const response = scriptedResponse('anthropic', {
    id,
    model: 'claude-sonnet-4-5',
    steps,
    usage: { inputTokens: 50, outputTokens: 30 },
    ...(end.stop === undefined ? {} : { stop: end.stop }),
  })
  const container = end.container
  if (container === undefined) return response
  // The script has no container: the `message_delta` frame is framed again with it.
  const body = (response.body as string[]).map((frame) => {
    if (!frame.startsWith('event: message_delta\n')) return frame
    const data = JSON.parse(frame.slice(frame.indexOf('data: ') + 'data: '.length))
    data.delta.container = container
    return frameTyped([JSON.stringify(data)])[0]!
  })
  return { ...response, body }
}

/**
 * Anthropic accepting a request, then overloaded before any output: `message_start` reports the
 * input tokens (billed), then an `overloaded_error` event ends the stream, which the client
 * retries itself.
 */
export function overloadedAfterStart(id: string, inputTokens: number): ScriptedResponse {
  return {
    body: frameTyped([
      `{"type":"message_start","message":{"id":"${id}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":${inputTokens},"output_tokens":1}}}`,
      '{"type":"ping"}',
      '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    ]),
  }
}
