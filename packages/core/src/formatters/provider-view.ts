import type { HistoryEvent, Message } from '@kode/protocol'
import { startsMessageGroup, toProviderMessages } from '@kode/protocol/helpers'
import { type FormatterInstructions, formatForProvider, type HistoryFormatter } from './history-formatter.js'

/**
 * How each message is sent (see {@link ProviderViewOptions.format}): the message itself, or the
 * messages that take its place.
 */
export type ProviderMessageFormat = (message: Message) => Message | readonly Message[]

/** Options of a {@link ProviderView}. */
export interface ProviderViewOptions {
  /**
   * How each message of the view is sent: the messages to send in its place (none, one or more).
   * Called once per message, after the rules of `toProviderMessages` have been applied (so
   * synthetic results are formatted too); the formatted messages are kept, so a long session
   * formats each message once. Default: every message is sent as it is.
   */
  format?: ProviderMessageFormat | undefined
}

/**
 * The engine's view of a session: the messages the next model call sends, derived from the history
 * by `toProviderMessages` (from `@kode/protocol/helpers`, where the rules are listed) and never
 * stored. It keeps state between calls so a growing history is converted incrementally: `update`
 * applies the rules only to the records from the last user, assistant or system message on (what
 * comes before can no longer change) and formats each message once, so the work per turn stays
 * flat however long the session gets. The result always equals `toProviderMessages(history)`,
 * each message formatted.
 */
export class ProviderView {
  readonly #format: ProviderMessageFormat | undefined
  /** Formatted messages of `history.slice(0, #tailStart)`, its system message aside. */
  #settled: Message[] = []
  /** The formatted latest system message of the settled records. */
  #system: readonly Message[] = []
  /** Formatted messages of `history.slice(#tailStart)`; its system message, if any, in `#tailSystem`. */
  #tail: Message[] = []
  #tailSystem: readonly Message[] | undefined
  /** Where the last group starts: the records before it are settled. */
  #tailStart = 0
  #consumed = 0
  #lastId: string | undefined
  #converted = 0
  /** Each message's formatted form, so a message is formatted once however many updates see it. */
  #formatted = new WeakMap<Message, readonly Message[]>()
  /** The same for the synthetic results of the last group, by id (the rule makes them afresh). */
  #placeholders = new Map<string, readonly Message[]>()

  constructor(options: ProviderViewOptions = {}) {
    this.#format = options.format
  }

  /** How many history records have entered this view since it was created (for tests and tuning). */
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
    if (history.length > this.#consumed) this.#take(history)
    return [...(this.#tailSystem ?? this.#system), ...this.#settled, ...this.#tail]
  }

  /** Converts the records appended since the last update. */
  #take(history: readonly HistoryEvent[]): void {
    this.#converted += history.length - this.#consumed
    let start = this.#tailStart
    for (let i = history.length - 1; i >= this.#consumed; i--) {
      if (startsMessageGroup(history[i]!)) {
        start = i
        break
      }
    }
    if (start > this.#tailStart) {
      const settled = this.#convert(history.slice(this.#tailStart, start))
      if (settled.system) this.#system = settled.system
      for (const message of settled.messages) this.#settled.push(message)
      this.#placeholders.clear()
      this.#tailStart = start
    }
    const tail = this.#convert(history.slice(this.#tailStart))
    this.#tailSystem = tail.system
    this.#tail = tail.messages
    this.#consumed = history.length
    this.#lastId = history.at(-1)?.id
  }

  #reset(): void {
    this.#settled = []
    this.#system = []
    this.#tail = []
    this.#tailSystem = undefined
    this.#tailStart = 0
    this.#consumed = 0
    this.#formatted = new WeakMap()
    this.#placeholders.clear()
  }

  /** The rules applied to `records`, each message formatted; the system message apart. */
  #convert(records: readonly HistoryEvent[]): { system?: readonly Message[]; messages: Message[] } {
    const messages: Message[] = []
    let system: readonly Message[] | undefined
    const own = new Set<HistoryEvent>(records)
    for (const message of toProviderMessages(records)) {
      const sent = this.#sent(message, !own.has(message))
      if (message.role === 'system') system = sent
      else for (const one of sent) messages.push(one)
    }
    return system ? { system, messages } : { messages }
  }

  /**
   * What `message` is sent as, formatted at most once. A `synthetic` message (a result the rules
   * added, or a moded user message's copy) is a new object on every conversion, so it is
   * remembered by its id, which is stable.
   */
  #sent(message: Message, synthetic: boolean): readonly Message[] {
    const format = this.#format
    if (!format) return [message]
    let sent = synthetic ? this.#placeholders.get(message.id) : this.#formatted.get(message)
    if (!sent) {
      const out = format(message)
      sent = Array.isArray(out) ? (out as readonly Message[]) : [out as Message]
      if (synthetic) this.#placeholders.set(message.id, sent)
      else this.#formatted.set(message, sent)
    }
    return sent
  }
}

/**
 * The provider view the engine keeps for a session: `update(history)` returns the messages of the
 * next request as `formatter` presents them for requests carrying `instructions` (what
 * `formatter.instructions(tools)` returned for the agent's tools; default `{}`, requests that
 * offer no native tools). Each message is formatted once, when it first enters the view. The rules
 * of `toProviderMessages` (a call without a result gets a placeholder result, ...) apply before
 * the formatter sees the messages.
 */
export function createProviderView(
  formatter: HistoryFormatter,
  instructions: FormatterInstructions = {},
): ProviderView {
  return new ProviderView({ format: (message) => formatForProvider(formatter, message, instructions) })
}
