import type {
  AssistantMessage,
  DeveloperMessage,
  Message,
  ToolCallPart,
  ToolResultMessage,
  UserMessage,
} from '@kode/protocol'
import type { LLMRequest } from '../../types.js'

/** A message as the provider will see it, with the developer messages folded into it. */
export type ViewEntry =
  | { role: 'user'; message: UserMessage | DeveloperMessage; appended: DeveloperMessage[] }
  | { role: 'tool'; message: ToolResultMessage; appended: DeveloperMessage[] }
  | { role: 'assistant'; message: AssistantMessage }

/** The history in the shape every wire shares; adapters convert each entry. */
export interface ProviderView {
  /** System prompt pieces in order: `request.system`, then each system message's text. */
  system: string[]
  entries: ViewEntry[]
}

/**
 * Applies the cross-message rules of seed 000 before any wire conversion (with `thinking.ts`,
 * whose reasoning may go back signed, and `tool-call-ids.ts`, which ids a wire accepts, this
 * folder holds every rule for history that another provider produced):
 * - system messages become system prompt pieces;
 * - a developer message is appended to the immediately preceding user or tool message (or
 *   stands as a user message of its own when none precedes it);
 * - an assistant message with nothing to send is skipped;
 * - every tool call that has no result right after its assistant message gets a synthetic
 *   `error` result there, so the request stays valid (a call cut off mid-arguments included).
 * Entries keep the original message objects, so adapters can cache conversions per message.
 */
export function providerView(request: LLMRequest): ProviderView {
  const system: string[] = []
  if (request.system) system.push(request.system)
  const entries: ViewEntry[] = []
  let pendingCalls: ToolCallPart[] = []
  // Developer messages that arrive while tool results are still expected wait for the next one.
  let held: DeveloperMessage[] = []
  const pushTool = (message: ToolResultMessage) => {
    entries.push({ role: 'tool', message, appended: held })
    held = []
  }
  const flushMissingResults = () => {
    for (const call of pendingCalls) pushTool(syntheticResult(call))
    pendingCalls = []
  }
  for (const message of request.messages) {
    if (message.role === 'user' || message.role === 'assistant') flushMissingResults()
    switch (message.role) {
      case 'system': {
        const text = message.parts.map((p) => p.text).join('\n\n')
        if (text) system.push(text)
        break
      }
      case 'developer': {
        const last = entries[entries.length - 1]
        if (pendingCalls.length > 0) held.push(message)
        else if (last && last.role !== 'assistant') last.appended.push(message)
        else entries.push({ role: 'user', message, appended: [] })
        break
      }
      case 'user':
        entries.push({ role: 'user', message, appended: [] })
        break
      case 'assistant': {
        if (!hasContent(message)) break
        entries.push({ role: 'assistant', message })
        pendingCalls = message.parts.filter((p): p is ToolCallPart => p.type === 'tool_call')
        break
      }
      case 'tool':
        pendingCalls = pendingCalls.filter((call) => call.id !== message.toolCallId)
        pushTool(message)
        break
      default: {
        const unknown: never = message
        throw new TypeError(`unknown message role ${JSON.stringify((unknown as Message).role)}`)
      }
    }
  }
  flushMissingResults()
  return { system, entries }
}

/** Text of the result that stands in for a tool call that has none. */
export function syntheticResultText(call: ToolCallPart): string {
  return call.incomplete
    ? 'Error: the arguments of this tool call were cut off before they closed, so it was not run.'
    : 'Error: this tool call has no result; it was not run or its result was lost.'
}

function syntheticResult(call: ToolCallPart): ToolResultMessage {
  return {
    role: 'tool',
    id: `synthetic-${call.id}`,
    createdAt: 0,
    toolCallId: call.id,
    toolName: call.name,
    status: 'error',
    outputText: syntheticResultText(call),
    parts: [],
  }
}

function hasContent(message: AssistantMessage): boolean {
  for (const part of message.parts) {
    if (part.type === 'text' || part.type === 'thinking_text') {
      if (part.text !== '') return true
    } else return true
  }
  return false
}
