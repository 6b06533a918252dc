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
  for (const entry of view.entries) push(turnRole(entry), entryParts(entry, convert))
  return turns
}

/**
 * Where the turns of `entries` before `end` stop being final (a `FinalEnd` for `SettledItems`):
 * the first entry of their last turn, which the entries from `end` on may still merge into. The
 * entries before it make the same turns whatever follows them.
 */
export function lastTurnStart<P>(
  entries: readonly ViewEntry[],
  end: number,
  convert: TurnConverters<P>,
): number {
  let role: Turn<P>['role'] | undefined
  for (let i = end - 1; i >= 0; i--) {
    const entry = entries[i]!
    const own = turnRole(entry)
    // An entry that converts to nothing leaves no turn: the turns on either side of it may merge.
    if (own === role || entryParts(entry, convert).length === 0) continue
    if (role !== undefined) return i + 1
    role = own
  }
  return 0
}

function turnRole(entry: ViewEntry): Turn<unknown>['role'] {
  return entry.role === 'assistant' ? 'assistant' : 'user'
}

/** An entry's parts: its message's, then those of the developer messages folded into it. */
function entryParts<P>(entry: ViewEntry, convert: TurnConverters<P>): P[] {
  switch (entry.role) {
    case 'user':
    case 'tool': {
      const own = entry.role === 'user' ? convert.user(entry.message) : convert.tool(entry.message)
      return entry.appended.length === 0 ? own : [...own, ...entry.appended.flatMap(convert.user)]
    }
    case 'assistant':
      return convert.assistant(entry.message)
    default: {
      const unknown: never = entry
      throw new TypeError(`unknown entry ${JSON.stringify(unknown)}`)
    }
  }
}
