// Anthropic Messages events, shaped like the recorded `anthropic/anthropic-text` and
// `anthropic-json-other-tool` fixtures (a `ping` after the first block start, an empty first
// `input_json_delta`, usage on `message_start` and `message_delta`).
import { splitEvenly, TOOL_FRAGMENTS } from '../scenarios.mjs'

function messageStart() {
  return {
    type: 'message_start',
    message: {
      model: 'claude-sonnet-4-5-20250929',
      id: 'msg_01QC4g3HwBThD4BaNtBckFDJ',
      type: 'message',
      role: 'assistant',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: 1,
        service_tier: 'standard',
      },
    },
  }
}

function messageEnd(stopReason, outputTokens) {
  return [
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: {
        input_tokens: 12,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: outputTokens,
      },
    },
    { type: 'message_stop' },
  ]
}

/** The payloads of a text response made of `deltas`. */
export function textPayloads(deltas) {
  return [
    messageStart(),
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'ping' },
    ...deltas.map((text) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    ...messageEnd('end_turn', deltas.length),
  ]
}

/** The payloads of a response that calls `name` with `args`, the JSON text cut in fragments. */
export function toolPayloads(name, args) {
  const fragments = ['', ...splitEvenly(JSON.stringify(args), TOOL_FRAGMENTS)]
  return [
    messageStart(),
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_019Zvehfe1XQWweT1pm7okyt', name, input: {} },
    },
    { type: 'ping' },
    ...fragments.map((partial_json) => ({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json },
    })),
    ...messageEnd('tool_use', fragments.length),
  ]
}
