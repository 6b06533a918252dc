import type { HistoryEvent } from './history.js'
import type { AssistantMessage, Message, ToolResultMessage } from './messages.js'
import type { Citation, Part, ServerToolPart, ToolCallPart } from './parts.js'

// The helpers below loop by index, not `for...of`: a replay runs them for every response,
// and V8's optimizing compiler spends much less work on an index loop than on an inlined array
// iterator, work that is most of the fixed cost of replaying a short session.

/** Concatenates the `text` parts in order (an assistant message's content). */
export function joinText(parts: readonly Part[]): string {
  let out = ''
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.type === 'text') out += part.text
  }
  return out
}

/** Concatenates the `thinking_text` parts in order; `undefined` when there are none. */
export function joinThinking(parts: readonly Part[]): string | undefined {
  let out: string | undefined
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.type === 'thinking_text') out = (out ?? '') + part.text
  }
  return out
}

/** The `server_tool` parts, in order; `undefined` when there are none. */
export function serverToolsOf(parts: readonly Part[]): ServerToolPart[] | undefined {
  let out: ServerToolPart[] | undefined
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.type !== 'server_tool') continue
    out ??= []
    out.push(part)
  }
  return out
}

/** The citations of the `text` parts, in order; `undefined` when there are none. */
export function citationsOf(parts: readonly Part[]): Citation[] | undefined {
  let out: Citation[] | undefined
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.type !== 'text' || part.citations === undefined) continue
    out ??= []
    for (let j = 0; j < part.citations.length; j++) out.push(part.citations[j]!)
  }
  return out
}

/**
 * Each source once, in the order first cited: the citations with a `url` and `title` not seen
 * before (providers cite one page for several passages). What a list of sources under an answer
 * shows; `citedText` and `providerFields` are those of a source's first citation.
 */
export function distinctSources(citations: readonly Citation[]): Citation[] {
  const seen = new Set<string>()
  const out: Citation[] = []
  for (const citation of citations) {
    const key = JSON.stringify([citation.url ?? null, citation.title ?? null])
    if (seen.has(key)) continue
    seen.add(key)
    out.push(citation)
  }
  return out
}

/** The tool calls of an assistant message, in order. */
export function toolCallsOf(message: AssistantMessage): ToolCallPart[] {
  const calls: ToolCallPart[] = []
  for (const part of message.parts) if (part.type === 'tool_call') calls.push(part)
  return calls
}

/**
 * Whether the model refused to answer: Anthropic's `refusal` stop, or the `refusal` category an
 * adapter gives a refusal sent as text (OpenAI's). `stopDetails.explanation` says why, when the
 * provider did.
 */
export function isRefusal(message: AssistantMessage): boolean {
  return message.rawStopReason === 'refusal' || message.stopDetails?.category === 'refusal'
}

/**
 * Where the user interrupted: an assistant message with `stopReason: 'aborted'`, a tool result
 * with `status: 'aborted'`, or an explicit interrupt record each mean the user interrupted there.
 */
export function isInterrupt(event: HistoryEvent): boolean {
  if ('role' in event) {
    if (event.role === 'assistant') return event.stopReason === 'aborted'
    if (event.role === 'tool') return event.status === 'aborted'
    return false
  }
  return event.type === 'interrupt'
}

/** The UI protocol keeps tool status two-valued: `aborted` is reported as `error` (plus an interrupt). */
export function toolResultEventStatus(status: ToolResultMessage['status']): 'success' | 'error' {
  return status === 'success' ? 'success' : 'error'
}

/** Narrows a message by role. */
export function isRole<R extends Message['role']>(
  event: HistoryEvent,
  role: R,
): event is Extract<Message, { role: R }> {
  return 'role' in event && event.role === role
}
