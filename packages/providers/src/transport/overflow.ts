import type { ErrorPayloadFields } from './failures.js'

/**
 * How the built-in apis (and the OpenAI-compatible servers behind `openai-chat`) say that a
 * request does not fit the model's context window. Each api words it differently:
 *
 * - openai-chat, openai-responses: code `context_length_exceeded` ("This model's maximum context
 *   length is 128000 tokens. However, your messages resulted in ...", "Your input exceeds the
 *   context window of this model ...");
 * - anthropic: `invalid_request_error` "prompt is too long: 213462 tokens > 200000 maximum", or
 *   "input length and `max_tokens` exceed context limit: ..."; 413 `request_too_large`;
 * - google: `INVALID_ARGUMENT` "The input token count (1196265) exceeds the maximum number of
 *   tokens allowed (1048575).";
 * - openrouter: "This endpoint's maximum context length is 131072 tokens. However, you requested
 *   about ...";
 * - compatible servers: llama.cpp `exceed_context_size_error` ("the request exceeds the available
 *   context size"), vLLM and others in OpenAI's words.
 */
const OVERFLOW_CODES = new Set(['context_length_exceeded', 'exceed_context_size_error', 'request_too_large'])

const OVERFLOW_MESSAGES: readonly RegExp[] = [
  /maximum context length/i,
  /exceeds the context window/i,
  /prompt is too long/i,
  /exceed context limit/i,
  /input token count.*exceeds the maximum/i,
  /exceeds the available context size/i,
  /context[ _]length[ _]exceeded/i,
  /context window exceeds limit/i,
]

/**
 * Whether a provider error says the request is larger than the model's context window. A 429
 * ("too many tokens per minute") is a rate limit, never an overflow.
 */
export function isContextOverflow(status: number | undefined, fields: ErrorPayloadFields): boolean {
  if (status === 429) return false
  if (fields.code !== undefined && OVERFLOW_CODES.has(fields.code)) return true
  const message = fields.message
  return message !== undefined && OVERFLOW_MESSAGES.some((pattern) => pattern.test(message))
}
