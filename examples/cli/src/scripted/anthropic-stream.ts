import { type ScriptStep, scriptedResponse } from '@kode/providers/testing'

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
 * An Anthropic Messages stream, as the real API sends it (`scriptedResponse` from
 * `@kode/providers/testing`), with output tokens counted as a quarter of the characters produced.
 * With `stallAfter`, only that many blocks are sent and the stream then hangs open, like a model
 * that is still thinking, until the client gives up.
 */
export function anthropicStream(
  blocks: readonly ScriptedBlock[],
  options: { id: string; model: string; inputTokens: number; stallAfter?: number },
): ScriptedStream {
  let outputChars = 0
  const steps = blocks.map((block): ScriptStep => {
    if ('thinking' in block) outputChars += block.thinking.length
    else if ('text' in block) outputChars += block.text.length
    else {
      const { id, name, input } = block.toolUse
      outputChars += JSON.stringify(input).length
      return { toolCall: { id, name, arguments: input } }
    }
    return block
  })
  const response = scriptedResponse('anthropic', {
    id: options.id,
    model: options.model,
    steps,
    usage: { inputTokens: options.inputTokens, outputTokens: Math.max(1, Math.ceil(outputChars / 4)) },
    ...(options.stallAfter !== undefined ? { stallAfter: options.stallAfter } : {}),
  })
  const frames = response.body as string[]
  return response.stallAfterBytes === undefined
    ? { frames }
    : { frames, stallAfterBytes: response.stallAfterBytes }
}
