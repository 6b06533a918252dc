import type { Message, SystemMessage } from '@kode/protocol'
import { toProviderMessages } from '@kode/protocol/helpers'
import type { LLMRequest } from '../../types.js'
import { checkMessages } from './check-messages.js'
import { holdsImageFiles, readImageFiles } from './images.js'
import {
  type PreparedMessages,
  type PrepareMessagesOptions,
  systemPieces,
  type ViewEntry,
  viewEntries,
} from './prepare-messages.js'
import { holdsRun } from './same-run.js'

/** How many histories a preparer keeps the settled part of (see {@link MessagePreparer}). */
const KEPT_HISTORIES = 8

/**
 * `prepareMessages` for one client's successive requests, doing the work of each message once.
 * An agent re-sends its whole history every turn, with a few messages appended: the rules of
 * `toProviderMessages` and the folding of developer messages are local at each user or assistant
 * message (what comes after one cannot change what is sent for what came before), so the part of
 * the history before the last such message is settled and its entries are kept for the next
 * request. A request whose messages do not start with the settled ones (the very same objects: a
 * history message is immutable once written) is prepared from scratch. The result always equals
 * `prepareMessages(request, options)`, plus how many of its entries are settled (`settled`).
 *
 * A client may serve several histories at once (sub-agents share their parent's client, and
 * parallel tool calls run them together), so the settled parts of the last few histories used are
 * kept, each found by its first message object; a request of another one evicts the least
 * recently used. They are held until evicted, as the caller holds its histories anyway while the
 * conversations go on.
 */
export class MessagePreparer {
  /** By first message (`undefined` for an empty history), the least recently used first. */
  readonly #histories = new Map<Message | undefined, SettledHistory>()
  /** The messages found to be messages (see `checkMessages`): a history message is immutable once written. */
  readonly #checked = new WeakSet<Message>()

  async prepare(request: LLMRequest, options: PrepareMessagesOptions = {}): Promise<PreparedMessages> {
    const history = request.messages
    const converted = options.converted ?? (() => false)
    const kept = this.#keptFor(history)
    // The settled messages were checked when they were new (a request that failed settles none),
    // and so were the tail's that an earlier request sent.
    checkMessages(history, kept.messages.length, this.#checked)
    kept.settle(history, converted)
    const tail = toProviderMessages(history.slice(kept.messages.length))
    const view = viewEntries(tail)
    // The tail's files, and those of settled messages that were not converted (a request failed).
    const sent = kept.withFiles.length === 0 ? tail : kept.withFiles.concat(tail)
    // Taken before the files are read: a request of the same history prepared meanwhile settles more.
    const system = systemPieces(request, view.system ?? kept.system)
    const settled = kept.entries
    const files = await readImageFiles(sent, converted, options.readImageFile)
    return {
      system,
      entries: settled.length === 0 ? view.entries : settled.concat(view.entries),
      files,
      settled: { history: kept.token, count: settled.length },
    }
  }

  /** The settled part `history` continues, or a new one in its place; now the most recently used. */
  #keptFor(history: readonly Message[]): SettledHistory {
    const key = history[0]
    const kept = this.#histories.get(key)
    this.#histories.delete(key)
    if (kept === undefined && this.#histories.size >= KEPT_HISTORIES)
      this.#histories.delete(this.#histories.keys().next().value)
    const current = kept?.continuedBy(history) ? kept : new SettledHistory()
    this.#histories.set(key, current)
    return current
  }
}

/** One history's settled part. Its arrays are new each time it grows: a request in flight may hold them. */
class SettledHistory {
  /** Stands for this settled part in `PreparedMessages.settled` (see `SettledItems`). */
  readonly token: object = {}
  /** The settled messages, as the request held them (a copy: the caller may reuse its array). */
  messages: readonly Message[] = []
  /** Those of their provider messages holding image files the adapter had not converted when settled. */
  withFiles: Message[] = []
  entries: ViewEntry[] = []
  system: SystemMessage | undefined

  /** Whether `history` starts with the settled messages. */
  continuedBy(history: readonly Message[]): boolean {
    return holdsRun(history, 0, this.messages)
  }

  /** Settles the messages before the last user or assistant message that are not settled yet. */
  settle(history: readonly Message[], converted: (message: Message) => boolean): void {
    const from = this.messages.length
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
    this.messages = this.messages.concat(part)
    // A message converted already has no files to read; one that is not (its request failed) may.
    const withFiles = sent.filter((message) => !converted(message) && holdsImageFiles(message))
    if (withFiles.length > 0) this.withFiles = this.withFiles.concat(withFiles)
    this.entries = this.entries.concat(view.entries)
    if (view.system) this.system = view.system
  }
}
