import { frameTyped, type ScriptedResponse } from '@kode/providers/testing'

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
 * then `message_delta` with the stop reason and usage, and `message_stop`.
 */
export function anthropicStream(id: string, blocks: readonly Block[]): ScriptedResponse {
  const events: unknown[] = [
    {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        usage: { input_tokens: 50, output_tokens: 1 },
      },
    },
  ]
  blocks.forEach((block, index) => {
    const delta = (d: unknown) => events.push({ type: 'content_block_delta', index, delta: d })
    if ('thinking' in block) {
      events.push({
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      })
      for (const word of words(block.thinking)) delta({ type: 'thinking_delta', thinking: word })
      delta({ type: 'signature_delta', signature: block.signature })
    } else if ('text' in block) {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } })
      for (const word of words(block.text)) delta({ type: 'text_delta', text: word })
    } else if ('server' in block) {
      const { input, ...start } = block.server
      const streamed = input !== undefined
      events.push({
        type: 'content_block_start',
        index,
        content_block: streamed ? { ...start, input: {} } : start,
      })
      if (streamed) delta({ type: 'input_json_delta', partial_json: JSON.stringify(input) })
    } else {
      const { id: toolId, name, input } = block.toolUse
      events.push({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: toolId, name, input: {} },
      })
      const json = JSON.stringify(input)
      const half = Math.ceil(json.length / 2)
      delta({ type: 'input_json_delta', partial_json: json.slice(0, half) })
      delta({ type: 'input_json_delta', partial_json: json.slice(half) })
    }
    events.push({ type: 'content_block_stop', index })
  })
  const toolUse = blocks.some((b) => 'toolUse' in b)
  events.push({
    type: 'message_delta',
    delta: { stop_reason: toolUse ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: 30 },
  })
  events.push({ type: 'message_stop' })
  return { body: frameTyped(events.map((e) => JSON.stringify(e))) }
}

function words(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [text]
}
