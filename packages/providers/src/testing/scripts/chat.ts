import { argumentsJson, halves, type ResponseScript, type ScriptStep, usageOf, words } from '../script.js'

/** Chat Completions (and OpenRouter): `chat.completion.chunk` deltas, the finish reason, then usage. */
export function chatPayloads(
  script: ResponseScript,
  steps: readonly ScriptStep[],
  calls: boolean,
  stalled: boolean,
): string[] {
  const id = script.id ?? 'scripted-response'
  const chunk = (delta: unknown, finish: string | null = null) =>
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  const payloads = [chunk({ role: 'assistant', content: '' })]
  let callIndex = 0
  for (const step of steps) {
    if ('thinking' in step)
      for (const word of words(step.thinking)) payloads.push(chunk({ reasoning_content: word }))
    else if ('text' in step) for (const word of words(step.text)) payloads.push(chunk({ content: word }))
    else if ('image' in step)
      payloads.push(chunk({ images: [{ type: 'image_url', image_url: { url: step.image } }] }))
    else if ('serverBlock' in step)
      throw new TypeError('scriptedResponse: server-tool blocks are Anthropic only')
    else {
      const { id: callId, name } = step.toolCall
      const index = callIndex++
      payloads.push(
        chunk({ tool_calls: [{ index, id: callId, type: 'function', function: { name, arguments: '' } }] }),
      )
      for (const piece of halves(argumentsJson(step.toolCall.arguments)))
        payloads.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
    }
  }
  if (stalled) return payloads
  payloads.push(chunk({}, script.stop ?? (calls ? 'tool_calls' : 'stop')))
  const usage = usageOf(script)
  if (usage) {
    payloads.push(
      JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        choices: [],
        usage: {
          prompt_tokens: usage.inputTokens,
          completion_tokens: usage.outputTokens,
          total_tokens: usage.inputTokens + usage.outputTokens,
        },
      }),
    )
  }
  return payloads
}
