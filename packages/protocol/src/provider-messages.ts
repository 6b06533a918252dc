import type { HistoryEvent } from './history.js'
import { toolCallsOf } from './message-helpers.js'
import type {
  AssistantMessage,
  DeveloperMessage,
  Message,
  SystemMessage,
  ToolResultMessage,
  UserMessage,
} from './messages.js'
import type { ToolCallPart } from './parts.js'

/** The text of the synthetic result a tool call gets when the history holds no result for it. */
export const MISSING_RESULT_TEXT =
  'Error: this tool call has no result; it was not run or its result was lost.'
/** The same, for a call whose arguments were cut off (it never ran). */
export const INCOMPLETE_CALL_TEXT =
  'Error: the arguments of this tool call were cut off before they closed, so it was not run.'

/** An assistant message and the results answering its calls, until a user, assistant or system message. */
interface ToolGroup {
  assistant: AssistantMessage
  calls: ToolCallPart[]
  answered: Set<string>
  /** Developer messages that arrived while calls were unanswered: sent after the group's results. */
  held: DeveloperMessage[]
}

/**
 * The messages a model call sends for `history`. Every provider and the agent engine apply this
 * one rule, so a history read from a store and sent straight to a client gets the same repairs as
 * one the engine sends:
 *
 * - only the latest system message is sent, and first;
 * - error, interrupt and task-metadata records are not sent (and do not end a tool group);
 * - an assistant message with nothing to send (no parts, or only empty text) is not sent;
 *   aborted assistant messages stay;
 * - a tool result must answer a call of the assistant message before it, before the next user,
 *   assistant or system message: a result answering no such call, or one answered already, is
 *   dropped, since providers reject it;
 * - a call with no result gets a synthetic `error` result after the real ones (id
 *   `<callId>:missing-result`; text {@link MISSING_RESULT_TEXT}, or {@link INCOMPLETE_CALL_TEXT}
 *   for a call whose arguments were cut off), so the request stays valid;
 * - developer messages stay as their own messages, in place; one that arrives while calls of the
 *   message before it are still unanswered waits until the results are all there, so the results
 *   stay together after their calls. (Each wire then appends a developer message to the user or
 *   tool message before it.)
 * - a user message sent in a mode (`mode`, `modeContext`) is sent as a copy without those fields
 *   whose first part is the text block {@link modeBlock} (the mode's name and context), before the
 *   message's own parts.
 *
 * The messages are the history's own objects (synthetic results and moded user messages aside),
 * in a new array. Applying
 * the rule to its own output changes nothing. The rule is local: wherever `history[k]` is a user,
 * assistant or system message (see {@link startsMessageGroup}), the messages of `history` are those
 * of `history.slice(0, k)` followed by those of `history.slice(k)`, with only the latest system
 * message kept, first. An incremental view can therefore convert only the records from the last
 * such message on.
 */
export function toProviderMessages(history: readonly HistoryEvent[]): Message[] {
  const out: Message[] = []
  let system: SystemMessage | undefined
  let group: ToolGroup | undefined
  const closeGroup = () => {
    if (!group) return
    for (const call of group.calls)
      if (!group.answered.has(call.id)) out.push(missingResult(group.assistant, call))
    for (const held of group.held) out.push(held)
    group = undefined
  }
  for (const event of history) {
    // Records (error, interrupt, task metadata) are for replay only.
    if (!('role' in event)) continue
    switch (event.role) {
      case 'tool':
        if (!group || group.answered.has(event.toolCallId)) break
        if (!group.calls.some((call) => call.id === event.toolCallId)) break
        group.answered.add(event.toolCallId)
        out.push(event)
        break
      case 'developer':
        if (group && hasUnanswered(group)) group.held.push(event)
        else out.push(event)
        break
      case 'assistant':
        closeGroup()
        if (!hasContent(event)) break
        out.push(event)
        group = { assistant: event, calls: toolCallsOf(event), answered: new Set(), held: [] }
        break
      case 'system':
        closeGroup()
        system = event
        break
      case 'user':
        closeGroup()
        out.push(event.mode === undefined ? event : withModeBlock(event))
        break
      default: {
        const unknown: never = event
        void unknown
      }
    }
  }
  closeGroup()
  if (system) out.unshift(system)
  return out
}

/**
 * Whether the rule of {@link toProviderMessages} starts a new group at `event` (a user, assistant
 * or system message): what comes after it can never change the messages sent for what came before.
 */
export function startsMessageGroup(event: HistoryEvent): boolean {
  return 'role' in event && (event.role === 'user' || event.role === 'assistant' || event.role === 'system')
}

/**
 * The text block a user message's mode is sent as, before the message's own text:
 * `<user-mode name="koding">` and the mode context on its own lines, then `</user-mode>`; with no
 * context, `<user-mode name="koding" />`. The name is escaped as an XML attribute; the context is
 * sent as it is.
 */
export function modeBlock(mode: string, modeContext?: string): string {
  const name = mode.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;')
  if (modeContext === undefined || modeContext === '') return `<user-mode name="${name}" />`
  return `<user-mode name="${name}">\n${modeContext}\n</user-mode>`
}

function withModeBlock(message: UserMessage): UserMessage {
  const { mode, modeContext, ...rest } = message
  return { ...rest, parts: [{ type: 'text', text: modeBlock(mode!, modeContext) }, ...message.parts] }
}

function hasUnanswered(group: ToolGroup): boolean {
  return group.calls.some((call) => !group.answered.has(call.id))
}

function missingResult(assistant: AssistantMessage, call: ToolCallPart): ToolResultMessage {
  return {
    role: 'tool',
    // Derived from the call so the same history always yields the same message.
    id: `${call.id}:missing-result`,
    createdAt: assistant.createdAt,
    toolCallId: call.id,
    toolName: call.name,
    status: 'error',
    outputText: call.incomplete ? INCOMPLETE_CALL_TEXT : MISSING_RESULT_TEXT,
    parts: [],
  }
}

/** False for a message with nothing a provider could be sent: no parts, or only empty text. */
function hasContent(message: AssistantMessage): boolean {
  for (const part of message.parts) {
    if (part.type !== 'text' && part.type !== 'thinking_text') return true
    if (part.text !== '') return true
  }
  return false
}
