// The scripted model's responses as OpenAI Chat Completions SSE, shaped like the real API's
// chunks (id, created, model, fingerprint on each; usage in a last chunk with no choices; [DONE]).
import { ARGUMENT_FRAGMENTS, callsOf, TURNS, textDeltas } from './task.mjs'

function chunk(turn, delta, finishReason = null) {
  return {
    id: `chatcmpl-bench-agents-${turn}`,
    object: 'chat.completion.chunk',
    created: 1_770_933_892,
    model: 'gpt-4.1-2025-04-14',
    service_tier: 'default',
    system_fingerprint: 'fp_de604bd877',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null,
  }
}

function usage(turn) {
  return {
    id: `chatcmpl-bench-agents-${turn}`,
    object: 'chat.completion.chunk',
    created: 1_770_933_892,
    model: 'gpt-4.1-2025-04-14',
    choices: [],
    usage: { prompt_tokens: 800 * turn, completion_tokens: 160, total_tokens: 800 * turn + 160 },
  }
}

function fragments(text, count) {
  const size = Math.ceil(text.length / count)
  const out = []
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size))
  return out
}

/** The SSE body of `turn`'s response; with `text`, a plain answer of that text instead. */
export function renderTurn(turn, text) {
  const payloads = [chunk(turn, { role: 'assistant', content: '', refusal: null })]
  for (const content of text === undefined ? textDeltas(turn) : [text])
    payloads.push(chunk(turn, { content }))
  const calls = text === undefined ? callsOf(turn) : []
  for (const [index, call] of calls.entries()) {
    payloads.push(
      chunk(turn, {
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    )
    for (const piece of fragments(JSON.stringify(call.args), ARGUMENT_FRAGMENTS)) {
      payloads.push(chunk(turn, { tool_calls: [{ index, function: { arguments: piece } }] }))
    }
  }
  payloads.push(chunk(turn, {}, calls.length > 0 ? 'tool_calls' : 'stop'))
  payloads.push(usage(turn))
  return Buffer.from(`${payloads.map((p) => `data: ${JSON.stringify(p)}\n\n`).join('')}data: [DONE]\n\n`)
}

/** Every turn's body, rendered once. */
export function renderAll() {
  return Array.from({ length: TURNS }, (_, i) => renderTurn(i + 1))
}
