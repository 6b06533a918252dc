import type { HistoryEvent, Message } from '@kode/protocol'
import {
  type CreateSessionInit,
  type ProviderView,
  SessionError,
  type SessionErrorCode,
  type SessionLease,
  type SessionStore,
} from '@kode/session'
import type { FormatterInstructions, HistoryFormatter } from '../formatters/history-formatter.js'
import { createProviderView } from '../formatters/provider-view.js'

/**
 * One session's history as the engine writes it: every record is appended to the store (and the
 * append awaited) before it joins the in-memory copy, so the engine only announces what is durable.
 * For each task the journal holds the session's writer (a `SessionLease`): another agent, store or
 * process cannot write the session meanwhile, and is refused with `session_locked`. Between tasks
 * the writer is given back, and a session another writer extended meanwhile is read again.
 * The provider view is kept incrementally, as the agent's history formatter presents it: each
 * message is formatted once, so building the next request costs the same at turn 50 as at turn 1.
 */
export class Journal {
  readonly store: SessionStore
  readonly sessionId: string
  #history: HistoryEvent[] = []
  #loaded = false
  #lease: SessionLease | undefined
  readonly #formatter: HistoryFormatter
  #view: ProviderView

  constructor(
    store: SessionStore,
    sessionId: string,
    formatter: HistoryFormatter,
    instructions: FormatterInstructions,
  ) {
    this.store = store
    this.sessionId = sessionId
    this.#formatter = formatter
    this.#view = createProviderView(formatter, instructions)
  }

  /**
   * The requests' instructions changed (the agent's tools did): messages are formatted afresh for
   * them, once, on the next call, since a formatter may present past actions differently.
   */
  setInstructions(instructions: FormatterInstructions): void {
    this.#view = createProviderView(this.#formatter, instructions)
  }

  /** The records persisted so far (the session's whole history once opened). */
  get history(): readonly HistoryEvent[] {
    return this.#history
  }

  /**
   * Takes the session's writer for a task, creating the session with `init` when the store has
   * none by this id, and (re)loads its history when it is not the one in memory. Fails with
   * `session_locked` while another writer holds the session.
   */
  async open(init: CreateSessionInit): Promise<void> {
    if (this.#lease) return
    const lease = await this.#acquire(init)
    try {
      const info = await this.store.info(this.sessionId)
      if (!this.#loaded || info?.recordCount !== this.#history.length) {
        this.#history = await this.store.read(this.sessionId)
        this.#loaded = true
      }
    } catch (error) {
      await lease.release().catch(() => {})
      throw error
    }
    this.#lease = lease
  }

  /** Gives the session's writer back (at the end of a task). */
  async close(): Promise<void> {
    const lease = this.#lease
    this.#lease = undefined
    await lease?.release()
  }

  async #acquire(init: CreateSessionInit): Promise<SessionLease> {
    try {
      return await this.store.acquire(this.sessionId)
    } catch (error) {
      if (!isSessionError(error, 'session_not_found')) throw error
    }
    try {
      await this.store.create({ ...init, id: this.sessionId })
    } catch (error) {
      // Another writer created it in between: the lease decides who writes.
      if (!isSessionError(error, 'session_exists')) throw error
    }
    return this.store.acquire(this.sessionId)
  }

  /** Appends one record durably, then remembers it. */
  async persist(record: HistoryEvent): Promise<void> {
    if (!this.#lease) throw new Error(`the journal of session ${this.sessionId} is not open`)
    await this.#lease.append([record])
    this.#history.push(record)
  }

  /** The messages of the next model call (see `ProviderView` for how dangling calls are answered). */
  providerMessages(): Message[] {
    return this.#view.update(this.#history)
  }
}

function isSessionError(error: unknown, code: SessionErrorCode): boolean {
  return SessionError.is(error) && error.code === code
}
