import type { HistoryEvent } from '@kode/protocol'
import type { CreateSessionInit, SessionInfo, SessionPatch } from '../session-info.js'

/**
 * Where sessions live: an append-only history per session plus its metadata. The engine writes
 * through it; hosts list, load, fork and export through it. Every method validates the session id.
 * Refusals are `SessionError`s (`code` says why); I/O failures surface as the platform's errors.
 */
export interface SessionStore {
  /** Creates an empty session. Fails with `session_exists` when the id is taken. */
  create(init?: CreateSessionInit): Promise<SessionInfo>
  /**
   * Appends records in order. Every record is validated first: if one is invalid nothing is
   * written (`invalid_record`). Appends to one session are applied in call order, and each is
   * durable once its promise resolves.
   */
  append(sessionId: string, events: readonly HistoryEvent[]): Promise<void>
  /** The session's whole history, in append order. Fails with `session_not_found`. */
  read(sessionId: string): Promise<HistoryEvent[]>
  /** The session's metadata, or `undefined` when there is no such session. */
  info(sessionId: string): Promise<SessionInfo | undefined>
  /** Changes title, model or provider. Fails with `session_not_found`. */
  update(sessionId: string, patch: SessionPatch): Promise<SessionInfo>
  /** Every session (sub-agent sessions included), newest updated first. */
  list(): Promise<SessionInfo[]>
  /** Removes a session and its history. Deleting a session that does not exist does nothing. */
  delete(sessionId: string): Promise<void>
  /**
   * Finishes pending writes of one session and lets go of its writer (the file store's lock and
   * file handle), so another store or process may write the session; `agent.close()` calls it.
   * The store stays open, and a later append takes the writer again. Releasing a session this
   * store is not writing does nothing. Optional: a store without per-session writers may omit it.
   */
  release?(sessionId: string): Promise<void>
  /** Finishes pending writes and releases locks and file handles. The store is unusable after. */
  close(): Promise<void>
}

/**
 * Something a store recovered from without failing the operation. Pass `onWarning` to log them;
 * they mean data was ignored or repaired.
 */
export type StoreWarning =
  /** The last line of a history file was cut off (a crash mid-append); it was ignored. */
  | { type: 'torn_tail'; sessionId: string; file: string; line: number; bytes: number }
  /** Before appending, the cut-off last line was truncated away. */
  | { type: 'torn_tail_repaired'; sessionId: string; file: string; bytes: number }
  /** A writer lock left by a process that no longer runs was removed. */
  | { type: 'stale_lock_removed'; sessionId: string; file: string; pid: number }
  /** Writing a session's metadata file failed; it is retried on the next append and on close. */
  | { type: 'metadata_write_failed'; sessionId: string; file: string; error: unknown }
  /** `list()` skipped a session whose metadata could not be read. */
  | { type: 'unreadable_session'; sessionId: string; file: string; error: unknown }
