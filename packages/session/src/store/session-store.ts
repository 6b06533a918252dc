import type { HistoryEvent } from '@kode/protocol'
import type { CreateSessionInit, SessionInfo, SessionPatch } from '../session-info.js'
import type { ListSessionsOptions } from './list-options.js'

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
   * durable once its promise resolves; one that fails leaves the history as it was. Refused with
   * `session_locked` while a lease on the session is held (see `acquire`).
   */
  append(sessionId: string, events: readonly HistoryEvent[]): Promise<void>
  /**
   * Takes the session's writer for one caller until `release()`: meanwhile every other writer is
   * refused with `session_locked` (`SessionLockedError`): another `acquire`, a plain `append` or
   * `delete` through this store, and any writer in another store or process. Of two concurrent
   * callers exactly one wins. The engine holds a lease for each task, so two agents cannot
   * interleave their turns in one session. Fails with `session_not_found` for a missing session.
   */
  acquire(sessionId: string): Promise<SessionLease>
  /** The session's whole history, in append order. Fails with `session_not_found`. */
  read(sessionId: string): Promise<HistoryEvent[]>
  /**
   * Reads the session's history like `read`, but hands the records out in batches (at most
   * `batchSize` each, in append order) as they are decoded, so a caller that derives something
   * from them (`replaySession`, `exportSessionHtml`) never holds the whole history. The records
   * are those `read` returns: a read while appends happen yields a prefix of the history, every
   * record whole and exactly once. Fails as `read` does (`session_not_found`, a corrupt record,
   * a refused link), after yielding the batches before the fault; fails with `store_closed` when
   * the store closes during the read. Aborting `signal` ends the read by throwing the signal's
   * reason (an `AbortError` unless you gave one). Breaking out of the loop ends the read and
   * releases its file or connection.
   *
   * Optional, so that a store written for an earlier release still fits; the file store, the
   * memory store and the Postgres store have it. Callers fall back to `read` without it.
   */
  readBatches?(sessionId: string, options?: ReadBatchesOptions): AsyncIterable<HistoryEvent[]>
  /** The session's metadata, or `undefined` when there is no such session. */
  info(sessionId: string): Promise<SessionInfo | undefined>
  /**
   * Changes title, model or provider. Updates and appends to one session through one store are
   * applied in call order. Fails with `session_not_found`.
   */
  update(sessionId: string, patch: SessionPatch): Promise<SessionInfo>
  /**
   * The sessions (sub-agent sessions included), newest updated first: by `updatedAt`, then by
   * `createdAt` (newest first), then by `id` as JavaScript compares strings (by UTF-16 code unit),
   * in every store. With no options, all of them.
   *
   * `options.parentSessionId` keeps only the sessions whose `parentSessionId` is that one: its
   * sub-agent sessions and the forks made from it. `options.limit` and `options.after` read the
   * list a page at a time (keyset pagination): pass the last session of a page as `after` to get
   * the next `limit` sessions after it, until a page comes back shorter than `limit`. Each page is
   * read when it is asked for, not from one snapshot: a session neither updated nor deleted
   * between the reads comes exactly once over the chain of pages, in its place. One that gets a
   * record appended meanwhile moves to the front (its `updatedAt` is the newest), ahead of the pages
   * still to come, so it comes at most once (where it was, if its page was read before) or not at
   * all; so does a session created meanwhile. (Writers whose clocks disagree, such as hosts
   * sharing a database, can stamp an append older than the session was: that session moves back
   * and may come twice.) Options of the wrong shape are refused with `invalid_list_options`
   * before anything is read.
   *
   * The options are optional, so that a store written for an earlier release, whose `list` takes
   * none, still fits: the engine's callers pass `parentSessionId` and still check each session's
   * own `parentSessionId`, so a store that ignores it and lists every session stays correct, only
   * slower. Hosts that page must use a store that pages (the file, memory and Postgres stores do).
   */
  list(options?: ListSessionsOptions): Promise<SessionInfo[]>
  /**
   * Removes a session and its history. Deleting a session that does not exist does nothing; one
   * whose metadata cannot be read (`corrupt_metadata`) is still deleted, since that is how a user
   * gets rid of it. Refused with `session_locked` while a lease on the session is held.
   */
  delete(sessionId: string): Promise<void>
  /**
   * Follows a session's history: yields its records from position `from` (default 0) in append
   * order, then each record appended later, as it is committed, until `signal` aborts, the loop
   * breaks, or the store closes; then the iteration simply ends. Every record comes exactly once
   * and in order, with its position, so a follower that stopped resumes with
   * `from: last.index + 1`. Fails with `session_not_found` for a missing session (also when the
   * session is deleted while followed).
   *
   * Optional: the memory store follows appends made through itself; the Postgres store
   * (`@kode/session-postgres`) follows appends from every host sharing the database; the file
   * store does not follow (read it again, or put sessions in Postgres to follow across hosts).
   */
  follow?(sessionId: string, options?: FollowOptions): AsyncIterable<FollowedRecord>
  /** Finishes pending writes and releases locks and file handles. The store is unusable after. */
  close(): Promise<void>
  /**
   * The largest record the store accepts, in bytes of its encoded line (`encodeHistoryEvent`, in
   * UTF-8): an append with a larger record fails with `record_too_large`, and nothing is written.
   * Absent when the store sets no such limit (the file and memory stores). A host that starts
   * work on a user's input (a durable task) reads it to refuse an input too large for the history
   * before anything is created.
   */
  readonly maxRecordBytes?: number | undefined
}

/** Options of `SessionStore.readBatches`. */
export interface ReadBatchesOptions {
  /**
   * The most records one batch holds: a positive integer. Default: the store's, 1,000 for the
   * memory and Postgres stores, 250 for the file store.
   */
  batchSize?: number | undefined
  /** Ends the read, which then throws the signal's reason. */
  signal?: AbortSignal | undefined
}

/** `readBatches`' default batch size: large enough that per-batch costs vanish, small enough to stay in the young heap. */
export const DEFAULT_READ_BATCH_SIZE = 1000

/**
 * The batch size `options` ask for, else `defaultSize` (the store's own default); a `TypeError`
 * unless it is a positive integer.
 */
export function readBatchSize(
  options: ReadBatchesOptions | undefined,
  defaultSize: number = DEFAULT_READ_BATCH_SIZE,
): number {
  const size = options?.batchSize ?? defaultSize
  if (!Number.isSafeInteger(size) || size < 1) {
    throw new TypeError(
      `readBatches: batchSize must be a positive integer, got ${String(options?.batchSize)}`,
    )
  }
  return size
}

/** Options of `SessionStore.follow`. */
export interface FollowOptions {
  /** The position of the first record wanted: the number of records already seen. Default 0. */
  from?: number | undefined
  /** Ends the iteration (without an error) when aborted. */
  signal?: AbortSignal | undefined
}

/** One record of a followed history and its position in it (0 for the first record). */
export interface FollowedRecord {
  readonly index: number
  readonly record: HistoryEvent
}

/** One caller's hold on a session's writer (see `SessionStore.acquire`). */
export interface SessionLease {
  readonly sessionId: string
  /** Appends like `SessionStore.append`; fails with `store_closed` once the lease is released. */
  append(events: readonly HistoryEvent[]): Promise<void>
  /**
   * Waits for this lease's appends and gives the session's writer back, to this store and to other
   * processes (the file store removes its lock file). Releasing twice does nothing.
   */
  release(): Promise<void>
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
  /**
   * Before appending, the lines a failed append left (its store could not cut them off: the
   * session was `session_broken` there) were truncated away.
   */
  | { type: 'failed_append_repaired'; sessionId: string; file: string; bytes: number }
  /** A writer lock left by a process that no longer runs was removed. */
  | { type: 'stale_lock_removed'; sessionId: string; file: string; pid: number }
  /** Writing a session's metadata file failed; it is retried on the next append and on close. */
  | { type: 'metadata_write_failed'; sessionId: string; file: string; error: unknown }
  /** `list()` skipped a session whose metadata could not be read. */
  | { type: 'unreadable_session'; sessionId: string; file: string; error: unknown }
