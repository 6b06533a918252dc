import type { Message, SystemMessage } from '@kode/protocol'
import { toProviderMessages } from '@kode/protocol/helpers'
import type { LLMRequest } from '../../types.js'
import { holdsImageFiles, readImageFiles } from './images.js'
import {
  type PreparedMessages,
  type PrepareMessagesOptions,
  systemPieces,
  type ViewEntry,
  viewEntries,
} from './prepare-messages.js'

/**
 * `prepareMessages` for one client's successive requests, doing the work of each message once.
 * An agent re-sends its whole history every turn, with a few messages appended: the rules of
 * `toProviderMessages` and the folding of developer messages are local at each user or assistant
 * message (what comes after one cannot change what is sent for what came before), so the part of
 * the history before the last such message is settled and its entries are kept for the next
 * request. A request whose messages do not start with the settled ones (the very same objects: a
 * history message is immutable once written) is prepared from scratch. The result always equals
 * `prepareMessages(request, options)`, plus how many of its entries are settled (`settled`). It
 * holds on to the last request's settled messages until the next request (one history, which its
 * caller holds anyway while the conversation goes on; for several at once see `HistoryStates`).
 */
export class MessagePreparer {
  /** The settled messages, as the request held them (a copy: the caller may reuse its array). */
  #settled: readonly Message[] = []
  /** Those of their provider messages holding image files the adapter had not converted when settled. */
  #withFiles: Message[] = []
  #entries: ViewEntry[] = []
  #system: SystemMessage | undefined
  /** The history the settled messages belong to: a new token each time the preparer starts over. */
  #history: object = {}

  async prepare(request: LLMRequest, options: PrepareMessagesOptions = {}): Promise<PreparedMessages> {
    const history = request.messages
    const converted = options.converted ?? (() => false)
    if (!this.#continues(history)) this.#reset()
    this.#settle(history, converted)
    const tail = toProviderMessages(history.slice(this.#settled.length))
    const view = viewEntries(tail)
    // The tail's files, and those of settled messages that were not converted (a request failed).
    const sent = this.#withFiles.length === 0 ? tail : this.#withFiles.concat(tail)
    // Taken before the files are read: a request of another history prepared meanwhile starts over.
    const system = systemPieces(request, view.system ?? this.#system)
    const settled = this.#entries
    const token = this.#history
    const files = await readImageFiles(sent, converted, options.readImageFile)
    return {
      system,
      entries: settled.length === 0 ? view.entries : settled.concat(view.entries),
      files,
      settled: { history: token, count: settled.length },
    }
  }

  /** Whether `history` starts with the settled messages. */
  #continues(history: readonly Message[]): boolean {
    const settled = this.#settled
    if (history.length < settled.length) return false
    for (let i = 0; i < settled.length; i++) if (history[i] !== settled[i]) return false
    return true
  }

  /** Settles the messages before the last user or assistant message that are not settled yet. */
  #settle(history: readonly Message[], converted: (message: Message) => boolean): void {
    const from = this.#settled.length
    let end = from
    for (let i = history.length - 1; i > from; i--) {
      const role = history[i]!.role
      if (role === 'user' || role === 'assistant') {
        end = i
        break
      }
    }
    if (end === from) return
    const part = history.slice(from, end)
    const sent = toProviderMessages(part)
    const view = viewEntries(sent)
    // New arrays, never pushed to: a request in flight may still hold the previous ones.
    this.#settled = this.#settled.concat(part)
    // A message converted already has no files to read; one that is not (its request failed) may.
    const withFiles = sent.filter((message) => !converted(message) && holdsImageFiles(message))
    if (withFiles.length > 0) this.#withFiles = this.#withFiles.concat(withFiles)
    this.#entries = this.#entries.concat(view.entries)
    if (view.system) this.#system = view.system
  }

  #reset(): void {
    this.#settled = []
    this.#withFiles = []
    this.#entries = []
    this.#system = undefined
    this.#history = {}
  }
}
