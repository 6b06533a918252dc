import type { AssistantMessage, ThinkingSignaturePart } from '@kode/protocol'
import type { LLMRequest } from '../../types.js'
import {
  type ChatBodyOptions,
  type ChatMessage,
  chatBody,
  type ReasoningReplay,
} from '../openai-chat/request.js'
import { signatureFits } from '../shared/thinking.js'

/**
 * OpenRouter reasoning replay: this model's `reasoning_details` (kept as an `openrouter`
 * signature part) go back verbatim; reasoning without details is left out; reasoning from any
 * other model or api becomes text.
 */
export function openrouterReasoningReplay(model: string) {
  return (message: AssistantMessage, own: boolean): ReasoningReplay => {
    const details = message.parts.find(
      (p): p is ThinkingSignaturePart =>
        p.type === 'thinking_signature' && signatureFits(p, 'openrouter', model),
    )
    if (details) {
      const parsed = parseDetails(details.signature)
      if (parsed) return { kind: 'fields', fields: { reasoning_details: parsed } }
    }
    return own ? { kind: 'omit' } : { kind: 'text' }
  }
}

function parseDetails(signature: string): unknown[] | undefined {
  try {
    const value: unknown = JSON.parse(signature)
    return Array.isArray(value) ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * The Chat Completions body plus OpenRouter's own fields: `reasoning` (`max_tokens` from
 * `budgetTokens`, else `effort`) instead of `reasoning_effort`, and `usage.include` so the last
 * chunk reports tokens and cost.
 */
export function openrouterBody(request: LLMRequest, messages: ChatMessage[], options: ChatBodyOptions) {
  const { reasoning, ...rest } = request
  const body = chatBody(rest, messages, options)
  if (reasoning?.budgetTokens !== undefined) body.reasoning = { max_tokens: reasoning.budgetTokens }
  else if (reasoning?.effort) body.reasoning = { effort: reasoning.effort }
  body.usage = { include: true }
  return body
}
