import { argumentsJson, halves, type ResponseScript, type ScriptStep, usageOf, words } from '../script.js'

/**
 * OpenAI Responses: `response.created` and `response.in_progress`, then one output item per step
 * (`output_item.added`, its parts and deltas, their `done` events, `output_item.done`), then
 * `response.completed` with the whole output and the usage, every event numbered by
 * `sequence_number`. Reasoning streams as a summary (a step's `signature` is the item's
 * `encrypted_content`); a `stop` other than `completed` ends with `response.incomplete` and that
 * reason (`max_output_tokens`).
 */
export function responsesEvents(
  script: ResponseScript,
  steps: readonly ScriptStep[],
  stalled: boolean,
): unknown[] {
  const id = script.id ?? 'scripted-response'
  const model = script.model ?? 'scripted-model'
  const events: Record<string, unknown>[] = []
  const push = (type: string, fields: Record<string, unknown>) =>
    events.push({ type, sequence_number: events.length, ...fields })
  const response = (status: string, output: unknown[], extra: Record<string, unknown> = {}) => ({
    id,
    object: 'response',
    created_at: 0,
    status,
    error: null,
    incomplete_details: null,
    model,
    output,
    ...extra,
  })
  push('response.created', { response: response('in_progress', [], { usage: null }) })
  push('response.in_progress', { response: response('in_progress', [], { usage: null }) })
  const output: unknown[] = []
  steps.forEach((step, index) => {
    const at = { output_index: index }
    if ('thinking' in step) {
      const itemId = `rs_scripted_${index}`
      const text = step.thinking
      const summary = { type: 'summary_text', text }
      push('response.output_item.added', { ...at, item: { id: itemId, type: 'reasoning', summary: [] } })
      const inSummary = { item_id: itemId, ...at, summary_index: 0 }
      push('response.reasoning_summary_part.added', {
        ...inSummary,
        part: { type: 'summary_text', text: '' },
      })
      for (const delta of words(text)) push('response.reasoning_summary_text.delta', { ...inSummary, delta })
      push('response.reasoning_summary_text.done', { ...inSummary, text })
      push('response.reasoning_summary_part.done', { ...inSummary, part: summary })
      const item: Record<string, unknown> = { id: itemId, type: 'reasoning', summary: [summary] }
      if (step.signature !== undefined) item.encrypted_content = step.signature
      push('response.output_item.done', { ...at, item })
      output.push(item)
    } else if ('text' in step) {
      const itemId = `msg_scripted_${index}`
      const { text } = step
      const part = (partText: string) => ({
        type: 'output_text',
        annotations: [],
        logprobs: [],
        text: partText,
      })
      const message = (status: string, content: unknown[]) => ({
        id: itemId,
        type: 'message',
        status,
        content,
        role: 'assistant',
      })
      push('response.output_item.added', { ...at, item: message('in_progress', []) })
      const inPart = { item_id: itemId, ...at, content_index: 0 }
      push('response.content_part.added', { ...inPart, part: part('') })
      for (const delta of words(text)) push('response.output_text.delta', { ...inPart, delta, logprobs: [] })
      push('response.output_text.done', { ...inPart, text, logprobs: [] })
      push('response.content_part.done', { ...inPart, part: part(text) })
      const item = message('completed', [part(text)])
      push('response.output_item.done', { ...at, item })
      output.push(item)
    } else if ('toolCall' in step) {
      const itemId = `fc_scripted_${index}`
      const args = argumentsJson(step.toolCall.arguments)
      const call = (status: string, callArgs: string) => ({
        id: itemId,
        type: 'function_call',
        status,
        arguments: callArgs,
        call_id: step.toolCall.id,
        name: step.toolCall.name,
      })
      push('response.output_item.added', { ...at, item: call('in_progress', '') })
      for (const delta of halves(args))
        push('response.function_call_arguments.delta', { item_id: itemId, ...at, delta })
      push('response.function_call_arguments.done', { item_id: itemId, ...at, arguments: args })
      const item = call('completed', args)
      push('response.output_item.done', { ...at, item })
      output.push(item)
    } else if ('image' in step)
      throw new TypeError('scriptedResponse: openai-responses scripts carry no images')
    else throw new TypeError('scriptedResponse: server-tool blocks are Anthropic only')
  })
  if (stalled) return events
  const usage = usageOf(script)
  const counts = usage
    ? {
        input_tokens: usage.inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: usage.outputTokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.inputTokens + usage.outputTokens,
      }
    : null
  const stop = script.stop ?? 'completed'
  if (stop === 'completed')
    push('response.completed', { response: response('completed', output, { usage: counts }) })
  else {
    push('response.incomplete', {
      response: response('incomplete', output, { incomplete_details: { reason: stop }, usage: counts }),
    })
  }
  return events
}
