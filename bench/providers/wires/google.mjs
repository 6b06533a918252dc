// Gemini `streamGenerateContent?alt=sse` chunks. Text is shaped like the recorded
// `google/google-text` fixture (usage and model version on every chunk, `finishReason` on the
// last). Gemini sends a whole `functionCall` at once unless it streams arguments, which Gemini 3
// does as `partialArgs` (the `google-stream-tool-call-arguments` fixtures): a name chunk, string
// values in pieces under their JSON path, an empty piece closing each string, an empty
// `functionCall` ending the call.
import { splitEvenly, TOOL_FRAGMENTS } from '../scenarios.mjs'

const MODEL = 'gemini-3-pro-preview'
const RESPONSE_ID = 'bH6LaZW8Fp_3nsEPqtaSwQ4'

function usage(candidates) {
  return {
    promptTokenCount: 9,
    candidatesTokenCount: candidates,
    totalTokenCount: 9 + candidates,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: 9 }],
  }
}

/** The payloads of a text response made of `deltas`. */
export function textPayloads(deltas) {
  return deltas.map((text, i) => {
    const candidate = { content: { parts: [{ text }], role: 'model' } }
    if (i === deltas.length - 1) candidate.finishReason = 'STOP'
    candidate.index = 0
    return {
      candidates: [candidate],
      usageMetadata: usage(i + 1),
      modelVersion: MODEL,
      responseId: RESPONSE_ID,
    }
  })
}

function callChunk(functionCall, extra = {}) {
  return {
    candidates: [{ content: { role: 'model', parts: [{ functionCall, ...extra }] } }],
    usageMetadata: { trafficType: 'ON_DEMAND' },
    modelVersion: MODEL,
    createTime: '2026-04-02T17:03:50.399550Z',
    responseId: RESPONSE_ID,
  }
}

/**
 * The payloads of a response that calls `name` with `args` (an object of string values), the
 * values cut so that the call carries TOOL_FRAGMENTS pieces in all: the first value whole, the
 * last one in the remaining pieces.
 */
export function toolPayloads(name, args) {
  const entries = Object.entries(args)
  const pieces = entries.map(([key, value], i) =>
    i === entries.length - 1 ? [key, splitEvenly(value, TOOL_FRAGMENTS - i)] : [key, [value]],
  )
  const payloads = [callChunk({ name, willContinue: true }, { thoughtSignature: 'CiMBjz1rX25KieIB4d4AwFn8' })]
  for (const [key, values] of pieces) {
    const jsonPath = `$.${key}`
    for (const stringValue of values) {
      payloads.push(
        callChunk({ partialArgs: [{ jsonPath, stringValue, willContinue: true }], willContinue: true }),
      )
    }
    payloads.push(callChunk({ partialArgs: [{ jsonPath, stringValue: '' }], willContinue: true }))
  }
  const last = callChunk({})
  last.candidates[0].finishReason = 'STOP'
  last.usageMetadata = { ...usage(TOOL_FRAGMENTS), trafficType: 'ON_DEMAND' }
  payloads.push(last)
  return payloads
}
