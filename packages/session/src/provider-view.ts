import type { AssistantMessage, HistoryEvent, Message, ToolCallPart, ToolResultMessage } from '@kode/protocol'
import { toolCallsOf } from '@kode/protocol'

/** The text of the synthetic result a tool call gets when its history holds no result. */
export const MISSING_RESULT_TEXT =
  'No result was recorded for this tool call: the session was interrupted or restarted before it finished.'
/** The same, for a call whose arguments were cut off (it never ran). */
export const INCOMPLETE_CALL_TEXT =
  'This tool call was not run: its arguments were cut off before they were complete.'

/**
 * How each message is sent (see {@link ProviderViewOptions.format}): the message itself, or the
 * messages that take its place.
 */
export type ProviderMessageFormat = (message: Message) => Message | readonly Message[]

/** Options of a {@link ProviderView}. */
export interface ProviderViewOptions {
  /**
   * How each message of the view is sent: the messages to send in its place (none, one or more).
   * Called once per message, when it enters the view, after the rules below have been applied
   * (so synthetic results are formatted too); the formatted messages are kept, so a long session
   * formats each message once. Default: every message is sent as it is.
   */
  format?: ProviderMessageFormat | undefined
}

/** An assistant message and the results that answer its calls, until a non-tool message ends it. */
interface ToolGroup {
  assistant: AssistantMessage
  calls: ToolCallPart[]
  answered: Set<string>
  /** The formatted assistant message, then the formatted results in the order they arrived. */
  formatted: Message[]
  /** Formatted synthetic results of unanswered calls, made at most once per call. */
  placeholders: Map<string, Message[]>
}

/**
 * The provider view of a session: the messages the next model call sends, derived from the
 * history and never stored. It keeps state between calls so a growing history is converted
 * incrementally (seed 004): `update` converts only the records appended since the last call, so
 * the work per turn stays flat however long the session gets.
 *
 * Rules: a tool call with no result before the next non-tool message (or the end) gets a
 * synthetic `error` result right after its message's real results; a result answering no call of
 * the assistant message before it (or answering one twice) is dropped, since providers reject it;
 * aborted assistant messages stay; an assistant message with no parts is dropped (there is nothing
 * to send); developer messages stay as their own messages (adapters append them to the preceding
 * user or tool message); only the latest system message is kept, first; error, interrupt and
 * task-metadata records are not sent.
 *
 * With a `format` option each message is formatted once as it enters the view, and the formatted
 * messages are what `update` returns (see {@link ProviderViewOptions}).
 */
export class ProviderView {
  readonly #format: ProviderMessageFormat | undefined
  /** Formatted messages of the closed groups and the user and developer messages, in order. */
  #body: Message[] = []
  #system: Message[] = []
  #group: ToolGroup | undefined
  #consumed = 0
  #lastId: string | undefined
  #converted = 0

  constructor(options: ProviderViewOptions = {}) {
    this.#format = options.format
  }

  /** How many history records this view has converted since it was created (for tests and tuning). */
  get convertedCount(): number {
    return this.#converted
  }

  /**
   * The provider messages for `history`, which should be the history given last time plus
   * appended records. Any other history (shorter, or with a different record where the last one
   * was) is converted from scratch. Returns a new array each call.
   */
  update(history: readonly HistoryEvent[]): Message[] {
    const consumed = this.#consumed
    if (history.length < consumed || (consumed > 0 && history[consumed - 1]!.id !== this.#lastId)) {
      this.#reset()
    }
    for (let i = this.#consumed; i < history.length; i++) this.#take(history[i]!)
    this.#consumed = history.length
    this.#lastId = history.at(-1)?.id
    return this.#render()
  }

  #reset(): void {
    this.#body = []
    this.#system = []
    this.#group = undefined
    this.#consumed = 0
  }

  #take(event: HistoryEvent): void {
    this.#converted++
    // Records (error, interrupt, task metadata) are for replay only.
    if (!('role' in event)) return
    switch (event.role) {
      case 'tool':
        this.#answer(event)
        return
      case 'assistant':
        this.#closeGroup()
        if (event.parts.length > 0) {
          this.#group = {
            assistant: event,
            calls: toolCallsOf(event),
            answered: new Set(),
            formatted: this.#formatted(event, []),
            placeholders: new Map(),
          }
        }
        return
      case 'system':
        this.#closeGroup()
        this.#system = this.#formatted(event, [])
        return
      case 'user':
      case 'developer':
        this.#closeGroup()
        this.#formatted(event, this.#body)
        return
      default: {
        const unknown: never = event
        void unknown
      }
    }
  }

  #answer(result: ToolResultMessage): void {
    const group = this.#group
    if (!group || group.answered.has(result.toolCallId)) return
    if (!group.calls.some((call) => call.id === result.toolCallId)) return
    group.answered.add(result.toolCallId)
    // A placeholder made while the call was unanswered gives way to the real result.
    group.placeholders.delete(result.toolCallId)
    this.#formatted(result, group.formatted)
  }

  #closeGroup(): void {
    if (!this.#group) return
    this.#appendGroup(this.#body, this.#group)
    this.#group = undefined
  }

  #render(): Message[] {
    const out: Message[] = [...this.#system]
    for (const message of this.#body) out.push(message)
    if (this.#group) this.#appendGroup(out, this.#group)
    return out
  }

  /** The group's formatted messages, then a formatted synthetic result per unanswered call. */
  #appendGroup(out: Message[], group: ToolGroup): void {
    for (const message of group.formatted) out.push(message)
    for (const call of group.calls) {
      if (group.answered.has(call.id)) continue
      let placeholder = group.placeholders.get(call.id)
      if (!placeholder) {
        placeholder = this.#formatted(missingResult(group.assistant, call), [])
        group.placeholders.set(call.id, placeholder)
      }
      for (const message of placeholder) out.push(message)
    }
  }

  /** Appends what `message` is sent as to `out`, and returns `out`. */
  #formatted(message: Message, out: Message[]): Message[] {
    const format = this.#format
    if (!format) {
      out.push(message)
      return out
    }
    const sent = format(message)
    if (Array.isArray(sent)) for (const one of sent as readonly Message[]) out.push(one)
    else out.push(sent as Message)
    return out
  }
}

/** Converts a whole history to provider messages (see `ProviderView` for the rules). */
export function toProviderMessages(history: readonly HistoryEvent[]): Message[] {
  return new ProviderView().update(history)
}

function missingResult(assistant: AssistantMessage, call: ToolCallPart): ToolResultMessage {
  return {
    role: 'tool',
    // Derived from the call so the same view always yields the same message.
    id: `${call.id}:missing-result`,
    createdAt: assistant.createdAt,
    toolCallId: call.id,
    toolName: call.name,
    status: 'error',
    outputText: call.incomplete ? INCOMPLETE_CALL_TEXT : MISSING_RESULT_TEXT,
    parts: [],
  }
}
