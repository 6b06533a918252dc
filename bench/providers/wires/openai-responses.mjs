// OpenAI Responses events, shaped like the recorded `openai-responses/azure-text` and
// `azure-tool-call` fixtures: every event numbered, the full text or arguments repeated in the
// `.done` events and in the final `response.completed`.
import { splitEvenly, TOOL_FRAGMENTS } from '../scenarios.mjs'

const RESPONSE_ID = 'resp_02ce8deeb6197db200698c5196e9588197a572bbea62d38cd1'

function response(status, output, usage) {
  return {
    id: RESPONSE_ID,
    object: 'response',
    created_at: 1_770_803_606,
    status,
    background: false,
    completed_at: status === 'completed' ? 1_770_803_608 : null,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: 'gpt-5.1',
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    prompt_cache_key: null,
    reasoning: { effort: 'none', summary: null },
    safety_identifier: null,
    service_tier: 'default',
    store: false,
    temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_logprobs: 0,
    top_p: 1,
    truncation: 'disabled',
    usage,
    user: null,
    metadata: {},
  }
}

function usage(outputTokens) {
  return {
    input_tokens: 11,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 11 + outputTokens,
  }
}

/** Numbers the events in order, as the API does. */
function sequence(events) {
  return events.map((event, i) => ({ type: event.type, sequence_number: i, ...event }))
}

/** The payloads of a text response made of `deltas`. */
export function textPayloads(deltas) {
  const item_id = 'msg_02ce8deeb6197db200698c5198ca0c81979bedbe6c98a8ab93'
  const text = deltas.join('')
  const part = (t) => ({ type: 'output_text', annotations: [], logprobs: [], text: t })
  const item = (status, t) => ({
    id: item_id,
    type: 'message',
    status,
    content: t === null ? [] : [part(t)],
    role: 'assistant',
  })
  const at = { item_id, output_index: 0, content_index: 0 }
  return sequence([
    { type: 'response.created', response: response('in_progress', [], null) },
    { type: 'response.in_progress', response: response('in_progress', [], null) },
    { type: 'response.output_item.added', output_index: 0, item: item('in_progress', null) },
    { type: 'response.content_part.added', ...at, part: part('') },
    ...deltas.map((delta) => ({
      type: 'response.output_text.delta',
      ...at,
      delta,
      logprobs: [],
      obfuscation: 'VLMdSoETMf5',
    })),
    { type: 'response.output_text.done', ...at, text, logprobs: [] },
    { type: 'response.content_part.done', ...at, part: part(text) },
    { type: 'response.output_item.done', output_index: 0, item: item('completed', text) },
    {
      type: 'response.completed',
      response: response('completed', [item('completed', text)], usage(deltas.length)),
    },
  ])
}

/** The payloads of a response that calls `name` with `args`, the JSON text cut in fragments. */
export function toolPayloads(name, args) {
  const item_id = 'fc_04041325ab8ae30400698c51c5468c8197a395f18875a5339f'
  const json = JSON.stringify(args)
  const fragments = splitEvenly(json, TOOL_FRAGMENTS)
  const item = (status, argumentsJson) => ({
    id: item_id,
    type: 'function_call',
    status,
    arguments: argumentsJson,
    call_id: 'call_H5DxLSFnsGhiROnUiDHmgyc8',
    name,
  })
  return sequence([
    { type: 'response.created', response: response('in_progress', [], null) },
    { type: 'response.in_progress', response: response('in_progress', [], null) },
    { type: 'response.output_item.added', output_index: 0, item: item('in_progress', '') },
    ...fragments.map((delta) => ({
      type: 'response.function_call_arguments.delta',
      item_id,
      output_index: 0,
      delta,
      obfuscation: 'nWru1sTmaAzi9O',
    })),
    { type: 'response.function_call_arguments.done', item_id, output_index: 0, arguments: json },
    { type: 'response.output_item.done', output_index: 0, item: item('completed', json) },
    {
      type: 'response.completed',
      response: response('completed', [item('completed', json)], usage(fragments.length)),
    },
  ])
}
