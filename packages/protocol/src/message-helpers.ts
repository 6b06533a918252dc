import type { HistoryEvent } from './history.js'
import type { AssistantMessage, Message, ToolResultMessage } from './messages.js'
import type { Part, ServerToolPart, ToolCallPart } from './parts.js'

/** Concatenates the `text` parts in order (the seed's assistant "content"). */
export function joinText(parts: readonly Part[]): string {
  let out = ''
  for (const part of parts) if (part.type === 'text') out += part.text
  return out
}

/** Concatenates the `thinking_text` parts in order; `undefined` when there are none. */
export function joinThinking(parts: readonly Part[]): string | undefined {
  let out: string | undefined
  for (const part of parts) if (part.type === 'thinking_text') out = (out ?? '') + part.text
  return out
}

/** The `server_tool` parts, in order; `undefined` when there are none. */
export function serverToolsOf(parts: readonly Part[]): ServerToolPart[] | undefined {
  let out: ServerToolPart[] | undefined
  for (const part of parts) {
    if (part.type !== 'server_tool') continue
    out ??= []
    out.push(part)
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
 * Seed 000's interrupt derivation: an assistant message with `stopReason: 'aborted'`, a tool result
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
