import { argumentsJson, halves, type ResponseScript, type ScriptStep, usageOf, words } from '../script.js'

/** Anthropic Messages: content blocks with typed deltas, then `message_delta` and `message_stop`. */
export function anthropicEvents(
  script: ResponseScript,
  steps: readonly ScriptStep[],
  calls: boolean,
  stalled: boolean,
): unknown[] {
  const usage = usageOf(script)
  const events: unknown[] = [
    {
      type: 'message_start',
      message: {
        id: script.id ?? 'scripted-response',
        type: 'message',
        role: 'assistant',
        model: script.model ?? 'scripted-model',
        content: [],
        stop_reason: null,
        usage: { input_tokens: usage?.inputTokens ?? 0, output_tokens: 1 },
      },
    },
  ]
  steps.forEach((step, index) => {
    const delta = (d: unknown) => events.push({ type: 'content_block_delta', index, delta: d })
    const start = (block: unknown) =>
      events.push({ type: 'content_block_start', index, content_block: block })
    if ('thinking' in step) {
      start({ type: 'thinking', thinking: '', signature: '' })
      for (const word of words(step.thinking)) delta({ type: 'thinking_delta', thinking: word })
      delta({ type: 'signature_delta', signature: step.signature ?? `scripted-signature-${index}` })
    } else if ('text' in step) {
      start({ type: 'text', text: '' })
      for (const word of words(step.text)) delta({ type: 'text_delta', text: word })
    } else if ('toolCall' in step) {
      const { id, name } = step.toolCall
      start({ type: 'tool_use', id, name, input: {} })
      for (const piece of halves(argumentsJson(step.toolCall.arguments)))
        delta({ type: 'input_json_delta', partial_json: piece })
    } else if ('serverBlock' in step) {
      const { input, ...block } = step.serverBlock
      start(input === undefined ? block : { ...block, input: {} })
      if (input !== undefined) delta({ type: 'input_json_delta', partial_json: JSON.stringify(input) })
    } else throw new TypeError('scriptedResponse: anthropic responses carry no images')
    events.push({ type: 'content_block_stop', index })
  })
  if (stalled) return events
  events.push({
    type: 'message_delta',
    delta: { stop_reason: script.stop ?? (calls ? 'tool_use' : 'end_turn'), stop_sequence: null },
    usage: { output_tokens: usage?.outputTokens ?? 0 },
  })
  events.push({ type: 'message_stop' })
  return events
}
