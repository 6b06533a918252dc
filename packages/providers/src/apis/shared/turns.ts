import type { AssistantMessage, DeveloperMessage, ToolResultMessage, UserMessage } from '@kode/protocol'
import type { ViewEntry } from './prepare-messages.js'

/** One turn of a wire whose conversation alternates between the user and the model. */
export interface Turn<P> {
  role: 'user' | 'assistant'
  parts: P[]
}

/** How one message becomes wire parts (cache the conversions; the arrays are never mutated). */
export interface TurnConverters<P> {
  user(message: UserMessage | DeveloperMessage): P[]
  tool(message: ToolResultMessage): P[]
  assistant(message: AssistantMessage): P[]
}

/**
 * The view as alternating user / assistant turns, for wires that carry tool results inside user
 * turns (Anthropic, Gemini): developer messages' parts follow the message they are folded into,
 * consecutive user content (results, then the next user message) merges into one turn, and a
 * message that converts to nothing leaves no turn.
 */
export function userAssistantTurns<P>(
  view: { entries: readonly ViewEntry[] },
  convert: TurnConverters<P>,
): Turn<P>[] {
  const turns: Turn<P>[] = []
  const push = (role: Turn<P>['role'], parts: P[]) => {
    if (parts.length === 0) return
    const last = turns[turns.length - 1]
    // Never mutate a cached conversion: build the merged array.
    if (last?.role === role) turns[turns.length - 1] = { role, parts: [...last.parts, ...parts] }
    else turns.push({ role, parts })
  }
  for (const entry of view.entries) {
    switch (entry.role) {
      case 'user':
      case 'tool': {
        const own = entry.role === 'user' ? convert.user(entry.message) : convert.tool(entry.message)
        push('user', entry.appended.length === 0 ? own : [...own, ...entry.appended.flatMap(convert.user)])
        break
      }
      case 'assistant':
        push('assistant', convert.assistant(entry.message))
        break
      default: {
        const unknown: never = entry
        throw new TypeError(`unknown entry ${JSON.stringify(unknown)}`)
      }
    }
  }
  return turns
}
