import type { HistoryEvent, Message } from '@kode/protocol'
import type { CreateSessionInit, SessionStore } from '@kode/session'
import type { FormatterInstructions, HistoryFormatter } from '../formatters/history-formatter.js'
import { createProviderView, type ProviderView } from '../formatters/provider-view.js'

/**
 * One session's history as the engine writes it: every record is appended to the store (and the
 * append awaited) before it joins the in-memory copy, so the engine only announces what is durable.
 * The provider view is kept incrementally, as the agent's history formatter presents it: each
 * message is formatted once, so building the next request costs the same at turn 50 as at turn 1.
 */
export class Journal {
  readonly store: SessionStore
  readonly sessionId: string
  #history: HistoryEvent[] = []
  readonly #view: ProviderView
  #opening: Promise<void> | undefined

  constructor(
    store: SessionStore,
    sessionId: string,
    formatter: HistoryFormatter,
    instructions: FormatterInstructions,
  ) {
    this.store = store
    this.sessionId = sessionId
    this.#view = createProviderView(formatter, instructions)
  }

  /** The records persisted so far (the session's whole history once opened). */
  get history(): readonly HistoryEvent[] {
    return this.#history
  }

  /**
   * Loads the session's history, creating the session with `init` when the store has none by this
   * id. Runs once; a failed attempt is forgotten so the next task tries again.
   */
  open(init: CreateSessionInit): Promise<void> {
    this.#opening ??= this.#open(init).catch((error: unknown) => {
      this.#opening = undefined
      throw error
    })
    return this.#opening
  }

  async #open(init: CreateSessionInit): Promise<void> {
    const info = await this.store.info(this.sessionId)
    if (info) this.#history = await this.store.read(this.sessionId)
    else await this.store.create({ ...init, id: this.sessionId })
  }

  /** Appends one record durably, then remembers it. */
  async persist(record: HistoryEvent): Promise<void> {
    await this.store.append(this.sessionId, [record])
    this.#history.push(record)
  }

  /** The messages of the next model call (see `ProviderView` for how dangling calls are answered). */
  providerMessages(): Message[] {
    return this.#view.update(this.#history)
  }
}
