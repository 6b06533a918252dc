import type { CompactionRecord, HistoryEvent, Message } from '@kode/protocol'
import {
  type CreateSessionInit,
  SessionError,
  type SessionErrorCode,
  type SessionLease,
  type SessionStore,
} from '@kode/session'
import { type CompactedHistory, compactedHistory } from '../compaction/compacted-history.js'
import type { FormatterInstructions, HistoryFormatter } from '../formatters/history-formatter.js'
import { createProviderView, type ProviderView } from '../formatters/provider-view.js'

/**
 * One session's history as the engine writes it: every record is appended to the store (and the
 * append awaited) before it joins the in-memory copy, so the engine only announces what is durable.
 * For each task the journal holds the session's writer (a `SessionLease`): another agent, store or
 * process cannot write the session meanwhile, and is refused with `session_locked`. Between tasks
 * the writer is given back, and a session another writer extended meanwhile is read again.
 * The provider view is kept incrementally, as the agent's history formatter presents it: each
 * message is formatted once, so building the next request costs the same at turn 50 as at turn 1.
 * After a `compaction` record the view is built from the compacted history (see
 * `compactedHistory`), with a fresh formatter cache, and grows incrementally again from there.
 */
export class Journal {
  readonly store: SessionStore
  readonly sessionId: string
  #history: HistoryEvent[] = []
  #loaded = false
  #lease: SessionLease | undefined
  readonly #formatter: HistoryFormatter
  #instructions: FormatterInstructions
  #view: ProviderView
  /** What the model sees: `#history` itself until the session is compacted. */
  #model: CompactedHistory = { records: this.#history, compaction: undefined, freshFrom: 0 }
  /** The session id was just generated, so the first `open` creates the session before taking it. */
  #generated: boolean
  /** The ids of the tool calls of every assistant message in the history. */
  #callIds = new Set<string>()

  /** `generated`: the engine made `sessionId` up (no host named it), so the store most likely has no such session. */
  constructor(
    store: SessionStore,
    sessionId: string,
    formatter: HistoryFormatter,
    instructions: FormatterInstructions,
    generated = false,
  ) {
    this.store = store
    this.sessionId = sessionId
    this.#formatter = formatter
    this.#instructions = instructions
    this.#view = this.#newView()
    this.#generated = generated
  }

  /**
   * The requests' instructions changed (the agent's tools did): messages are formatted afresh for
   * them, once, on the next call, since a formatter may present past actions differently.
   */
  setInstructions(instructions: FormatterInstructions): void {
    this.#instructions = instructions
    this.#view = this.#newView()
  }

  #newView(): ProviderView {
    return createProviderView(this.#formatter, this.#instructions)
  }

  /** The records persisted so far (the session's whole history once opened). */
  get history(): readonly HistoryEvent[] {
    return this.#history
  }

  /**
   * Takes the session's writer for a task, creating the session with `init` when the store has
   * none by this id, and (re)loads its history when it is not the one in memory. Without `init`
   * (a continuation, which carries on what the history holds) a missing session is not created:
   * the store's `session_not_found` is thrown. Fails with `session_locked` while another writer
   * holds the session.
   */
  async open(init: CreateSessionInit | undefined): Promise<void> {
    if (this.#lease) return
    const lease = await this.#acquire(init)
    try {
      const info = await this.store.info(this.sessionId)
      if (!this.#loaded || info?.recordCount !== this.#history.length) {
        this.#history = await this.store.read(this.sessionId)
        this.#loaded = true
        this.#callIds = new Set()
        for (const record of this.#history) this.#noteCalls(record)
        this.#compacted()
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

  async #acquire(init: CreateSessionInit | undefined): Promise<SessionLease> {
    if (init === undefined) return this.store.acquire(this.sessionId)
    // A generated id skips the `acquire` that would fail with `session_not_found` (an error built
    // and thrown for nothing); a store that has the session after all answers `session_exists`.
    const generated = this.#generated
    this.#generated = false
    if (!generated) {
      try {
        return await this.store.acquire(this.sessionId)
      } catch (error) {
        if (!isSessionError(error, 'session_not_found')) throw error
      }
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
  persist(record: HistoryEvent): Promise<void> {
    return this.persistAll([record])
  }

  /**
   * Appends records in one append, so that a reader of the session (another process following it)
   * sees all of them or none, then remembers them.
   */
  async persistAll(records: readonly HistoryEvent[]): Promise<void> {
    if (!this.#lease) throw new Error(`the journal of session ${this.sessionId} is not open`)
    if (records.length === 0) return
    await this.#lease.append(records)
    for (const record of records) {
      this.#history.push(record)
      this.#noteCalls(record)
      if (!('role' in record) && record.type === 'compaction') this.#compacted()
      else if (this.#model.records !== this.#history) this.#model.records.push(record)
    }
  }

  /**
   * The ids of the tool calls the session's assistant messages made so far: a new response's calls
   * must not reuse one (see `withUniqueCallIds`).
   */
  get callIds(): ReadonlySet<string> {
    return this.#callIds
  }

  #noteCalls(record: HistoryEvent): void {
    if (!('role' in record) || record.role !== 'assistant') return
    for (const part of record.parts) if (part.type === 'tool_call') this.#callIds.add(part.id)
  }

  /**
   * The records the model sees: the whole history, or after a compaction the latest system prompt,
   * the summary, the kept records and what came after (see `compactedHistory`).
   */
  get modelRecords(): readonly HistoryEvent[] {
    return this.#model.records
  }

  /** Index in `modelRecords` of the first record written after the latest compaction (0 without one). */
  get freshFrom(): number {
    return this.#model.freshFrom
  }

  /** The latest compaction, if the session has one. */
  get compaction(): CompactionRecord | undefined {
    return this.#model.compaction
  }

  /** The messages of the next model call (see `ProviderView` for how dangling calls are answered). */
  providerMessages(): Message[] {
    return this.#view.update(this.#model.records)
  }

  #compacted(): void {
    const model = compactedHistory(this.#history)
    // Uncompacted, the model sees the history itself (no copy to keep in step).
    this.#model = model.compaction ? model : { records: this.#history, compaction: undefined, freshFrom: 0 }
    this.#view = this.#newView()
  }
}

function isSessionError(error: unknown, code: SessionErrorCode): boolean {
  return SessionError.is(error) && error.code === code
}
