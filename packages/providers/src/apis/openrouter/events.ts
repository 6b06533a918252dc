import type { EventMapper } from '../../adapter.js'
import type { ErrorContext } from '../../transport/failures.js'
import { parseEventJson } from '../../transport/failures.js'
import { type ChatChunk, type ChatDelta, mapChatChunk } from '../openai-chat/events.js'

/** One entry of OpenRouter's `reasoning_details`, as streamed in pieces. */
interface ReasoningDetail {
  type?: string
  index?: number
  text?: string | null
  summary?: string | null
  data?: string | null
  signature?: string | null
  [field: string]: unknown
}

type OpenRouterChunk = ChatChunk & {
  choices?:
    | {
        delta?: (ChatDelta & { reasoning_details?: ReasoningDetail[] | null }) | null
        finish_reason?: string | null
      }[]
    | null
  usage?: ChatChunk['usage']
}

/**
 * The chat stream plus OpenRouter's extras. `: OPENROUTER PROCESSING` comments never reach the
 * mapper (the SSE decoder drops comments). `reasoning_details` pieces are merged by `index`
 * (text, summary and encrypted data appended, other fields kept) and recorded once, when the
 * response finishes, as one `openrouter` signature part holding the JSON array, so they can go
 * back verbatim. The cost OpenRouter reports in `usage.cost` wins over catalog prices.
 */
export function createOpenRouterEventMapper(errors: ErrorContext): EventMapper {
  const details: ReasoningDetail[] = []
  let recorded = false
  return (event, out) => {
    const record = () => {
      if (recorded || details.length === 0) return
      recorded = true
      out.signature(JSON.stringify(details), { format: 'openrouter' })
    }
    if (event.data === '[DONE]') {
      record()
      out.complete()
      return
    }
    const chunk = parseEventJson(event.data, errors) as OpenRouterChunk
    mapChatChunk(chunk, out, errors)
    const choice = chunk.choices?.[0]
    const pieces = choice?.delta?.reasoning_details
    if (pieces) for (const piece of pieces) mergeDetail(details, piece)
    const cost = chunk.usage?.cost
    if (typeof cost === 'number') out.costUsd(cost)
    if (choice?.finish_reason) record()
  }
}

function mergeDetail(details: ReasoningDetail[], piece: ReasoningDetail): void {
  const index = typeof piece.index === 'number' ? piece.index : details.length
  const known = details.find((d) => d.index === index && d.type === piece.type)
  if (!known) {
    details.push({ ...piece, index })
    return
  }
  for (const key of ['text', 'summary', 'data'] as const) {
    const value = piece[key]
    if (typeof value === 'string') known[key] = (known[key] ?? '') + value
  }
  // The server picks these keys: defined as own properties, so `__proto__` is data, not a prototype.
  for (const [key, value] of Object.entries(piece)) {
    if (key === 'text' || key === 'summary' || key === 'data') continue
    const current = Object.hasOwn(known, key) ? known[key] : undefined
    if (value !== null && value !== undefined && (current === undefined || current === null))
      Object.defineProperty(known, key, { value, enumerable: true, writable: true, configurable: true })
  }
}
