import type { Message } from '@kode/protocol'

/** How many histories a client keeps the state of (see {@link HistoryStates}). */
const KEPT_HISTORIES = 8

/**
 * A client's per-history request state (its `MessagePreparer` and the `SettledItems` built on it),
 * keyed by the history's first message object. Sub-agents that share their parent's client run
 * at once, each on its own history: with one state per client their requests would take turns
 * starting it over. The last few histories used are kept (a request of another one evicts the
 * least recently used), so the memory held stays bounded for a client shared by many sessions.
 */
export class HistoryStates<S> {
  readonly #create: () => S
  readonly #states = new Map<Message | undefined, S>()

  constructor(create: () => S) {
    this.#create = create
  }

  /** The state of the history `messages` belongs to, made when none is kept for it. */
  of(messages: readonly Message[]): S {
    const key = messages[0]
    let state = this.#states.get(key)
    if (state === undefined) {
      state = this.#create()
      if (this.#states.size >= KEPT_HISTORIES) this.#states.delete(this.#states.keys().next().value)
    } else this.#states.delete(key)
    // Most recently used last: the first key is the one to evict.
    this.#states.set(key, state)
    return state
  }
}
