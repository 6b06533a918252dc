// OpenAI Chat Completions chunks, shaped like the recorded `openai-chat/openai-text` fixture:
// every chunk repeats id, model and fingerprint; usage arrives in a last chunk with no choices
// (the client asks for `stream_options.include_usage`), then `data: [DONE]`.
import { splitEvenly, TOOL_FRAGMENTS } from '../scenarios.mjs'

/** The fields every chunk repeats, then its choices and usage. */
function base(choices, usage, obfuscation) {
  return {
    id: 'chatcmpl-BenchKode0000000000000000000',
    object: 'chat.completion.chunk',
    created: 1_770_933_892,
    model: 'gpt-4.1-2025-04-14',
    service_tier: 'default',
    system_fingerprint: 'fp_de604bd877',
    choices,
    usage,
    obfuscation,
  }
}

function chunk(delta, finishReason = null) {
  return base([{ index: 0, delta, logprobs: null, finish_reason: finishReason }], null, 'Qup1BsQ3')
}

function usageChunk(completionTokens) {
  const usage = {
    prompt_tokens: 16,
    completion_tokens: completionTokens,
    total_tokens: 16 + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
  return base([], usage, 'h9RiQLL')
}

/** The payloads of a text response made of `deltas`. */
export function textPayloads(deltas) {
  return [
    chunk({ role: 'assistant', content: '', refusal: null }),
    ...deltas.map((content) => chunk({ content })),
    chunk({}, 'stop'),
    usageChunk(deltas.length),
  ]
}

/** The payloads of a response that calls `name` with `args`, the JSON text cut in fragments. */
export function toolPayloads(name, args) {
  const fragments = splitEvenly(JSON.stringify(args), TOOL_FRAGMENTS)
  return [
    chunk({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          index: 0,
          id: 'call_H5DxLSFnsGhiROnUiDHmgyc8',
          type: 'function',
          function: { name, arguments: '' },
        },
      ],
      refusal: null,
    }),
    ...fragments.map((fragment) => chunk({ tool_calls: [{ index: 0, function: { arguments: fragment } }] })),
    chunk({}, 'tool_calls'),
    usageChunk(fragments.length),
  ]
}
