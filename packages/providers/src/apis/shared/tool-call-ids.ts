/** What a wire accepts as a tool-call id. */
export interface ToolCallIdRule {
  /** The longest id the wire accepts. */
  maxLength: number
  /** Characters the wire rejects (a global pattern); each becomes `_`. */
  disallowed?: RegExp
}

/**
 * The tool-call id rules of the built-in wires. Ids from another provider are rewritten to fit
 * (Anthropic rejects the dots and colons some providers use; OpenAI Chat Completions rejects ids
 * over 40 characters, the Responses API over 64). OpenRouter may route to any of them, so it gets
 * the strictest. Gemini is sent only the ids it gave (see `googleCallId`), as they are.
 */
export const TOOL_CALL_ID_RULES = {
  anthropic: { maxLength: 64, disallowed: /[^a-zA-Z0-9_-]/g },
  'openai-chat': { maxLength: 40 },
  openrouter: { maxLength: 40, disallowed: /[^a-zA-Z0-9_-]/g },
  'openai-responses': { maxLength: 64 },
} as const satisfies Record<string, ToolCallIdRule>

/**
 * Makes `id` acceptable under `rule`, deterministically: an id that already fits is kept as it is;
 * any other gets its rejected characters replaced, is cut to fit, and ends with a hash of the whole
 * original id, so two different ids never become one. A tool call and its result are rewritten by
 * the same function, so they still match.
 */
export function fitToolCallId(id: string, rule: ToolCallIdRule): string {
  const clean = rule.disallowed ? id.replace(rule.disallowed, '_') : id
  if (clean === id && id.length <= rule.maxLength) return id
  const suffix = `_${fnv1a(id)}`
  return clean.slice(0, Math.max(0, rule.maxLength - suffix.length)) + suffix
}

/** The tool-call id function of one wire (see {@link fitToolCallId}). */
export function toolCallIdFitter(rule: ToolCallIdRule): (id: string) => string {
  return (id) => fitToolCallId(id, rule)
}

/** 32-bit FNV-1a of the UTF-16 code units, as 8 hex digits: short, stable, no dependency. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16).padStart(8, '0')
}
