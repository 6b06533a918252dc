import { frameTyped } from '@kode/providers/testing'

/** One content block of a scripted Anthropic Messages response. */
export type ScriptedBlock =
  | { thinking: string }
  | { text: string }
  | { toolUse: { id: string; name: string; input: unknown } }

/** A scripted response as SSE frames, and where to stop sending to leave it hanging. */
export interface ScriptedStream {
  frames: string[]
  /** Bytes of `frames` to send before stalling; absent when the response completes. */
  stallAfterBytes?: number
}

/**
 * An Anthropic Messages stream, as the real API sends it: `message_start`, each block as
 * `content_block_start` / deltas a word at a time / `content_block_stop` (thinking with a
 * signature, tool input JSON in pieces), then `message_delta` with the stop reason and usage and
 * `message_stop`. With `stallAfter`, only that many blocks are sent and the stream then hangs
 * open, like a model that is still thinking, until the client gives up.
 */
export function anthropicStream(
  blocks: readonly ScriptedBlock[],
  options: { id: string; model: string; inputTokens: number; stallAfter?: number },
): ScriptedStream {
  const events: unknown[] = [
    {
      type: 'message_start',
      message: {
        id: options.id,
        type: 'message',
        role: 'assistant',
        model: options.model,
        content: [],
        stop_reason: null,
        usage: { input_tokens: options.inputTokens, output_tokens: 1 },
      },
    },
  ]
  let outputChars = 0
  let stallAt: number | undefined
  blocks.forEach((block, index) => {
    if (index === options.stallAfter) stallAt = events.length
    const delta = (d: unknown) => events.push({ type: 'content_block_delta', index, delta: d })
    if ('thinking' in block) {
      events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '' } })
      for (const word of words(block.thinking)) delta({ type: 'thinking_delta', thinking: word })
      delta({ type: 'signature_delta', signature: `scripted-signature-${index}` })
      outputChars += block.thinking.length
    } else if ('text' in block) {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } })
      for (const word of words(block.text)) delta({ type: 'text_delta', text: word })
      outputChars += block.text.length
    } else {
      const { id, name, input } = block.toolUse
      events.push({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id, name, input: {} },
      })
      const json = JSON.stringify(input)
      for (let at = 0; at < json.length; at += 24)
        delta({ type: 'input_json_delta', partial_json: json.slice(at, at + 24) })
      outputChars += json.length
    }
    events.push({ type: 'content_block_stop', index })
  })
  const toolUse = blocks.some((b) => 'toolUse' in b)
  events.push({
    type: 'message_delta',
    delta: { stop_reason: toolUse ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: Math.max(1, Math.ceil(outputChars / 4)) },
  })
  events.push({ type: 'message_stop' })
  const frames = frameTyped(events.map((event) => JSON.stringify(event)))
  if (stallAt === undefined) return { frames }
  const sent = frames.slice(0, stallAt)
  return { frames: sent, stallAfterBytes: Buffer.byteLength(sent.join('')) }
}

/** Words with their trailing space, so deltas arrive the way models stream them. */
function words(text: string): string[] {
  return text.match(/\S*\s*/g)?.filter((w) => w !== '') ?? [text]
}
