import { type LockHolder, type LockOwner, SessionError, SessionLockedError } from '@kode/session'

// Each class's own marker, so its `is` recognises its instances from any copy of this package
// (its ESM and CJS builds, two installs), where `instanceof` fails, and not its base class's.
const SESSION_LEASED_ERROR = Symbol.for('kode.SessionLeasedError')
const SESSION_LEASE_LOST_ERROR = Symbol.for('kode.SessionLeaseLostError')
const SESSION_APPEND_INTERRUPTED_ERROR = Symbol.for('kode.SessionAppendInterruptedError')
const CORRUPT_RECORD_ERROR = Symbol.for('kode.CorruptRecordError')

function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true
}

/**
 * Another writer holds the session's lease in the shared database. `expiresAt` is when the lease
 * runs out by the database's clock unless its holder renews it; a holder that died stops renewing,
 * so the session frees itself without anyone deleting anything.
 */
export class SessionLeasedError extends SessionLockedError {
  override readonly name: string = 'SessionLeasedError'
  readonly expiresAt: Date | undefined

  readonly [SESSION_LEASED_ERROR] = true

  /** True for a `SessionLeasedError` from any copy of this package (not for other `SessionError`s). */
  static override is(value: unknown): value is SessionLeasedError {
    return hasMarker(value, SESSION_LEASED_ERROR)
  }

  constructor(
    sessionId: string,
    holder: LockHolder | undefined,
    owner: LockOwner,
    expiresAt: Date | undefined,
  ) {
    super(sessionId, undefined, holder, owner)
    this.expiresAt = expiresAt
    const who = holder ? `process ${holder.pid} on ${holder.hostname}` : 'another writer'
    const until = expiresAt ? ` (its lease runs until ${expiresAt.toISOString()} unless renewed)` : ''
    this.message = `session ${sessionId} is being written by ${who}${until}: wait for its task to end; if that process died, its lease expires by itself and the next writer takes the session over`
  }
}

/**
 * A lease's writer was taken over: the lease expired (its process paused, or lost the database
 * for longer than `leaseMs`) and another writer acquired the session, bumping its fencing epoch.
 * Nothing of the refused append was written. Stop the task: the session has a new writer.
 */
export class SessionLeaseLostError extends SessionError {
  override readonly name: string = 'SessionLeaseLostError'
  /** The epoch this lease held; the session's current epoch is higher. */
  readonly epoch: number

  readonly [SESSION_LEASE_LOST_ERROR] = true

  /** True for a `SessionLeaseLostError` from any copy of this package (not for other `SessionError`s). */
  static override is(value: unknown): value is SessionLeaseLostError {
    return hasMarker(value, SESSION_LEASE_LOST_ERROR)
  }

  constructor(sessionId: string, epoch: number) {
    super(
      'session_lease_lost',
      `the lease on session ${sessionId} (epoch ${epoch}) was taken over by another writer, so nothing of this append was written: this writer paused or lost the database for longer than the lease; stop this task, the session goes on with its new writer`,
      { sessionId },
    )
    this.epoch = epoch
  }
}

/**
 * The connection to Postgres was lost while an append was under way (a network cut, a database
 * restart, a proxy or `pg_terminate_backend` ending it), and the records were then not found in
 * the session: `written: false`, the append may be made again. `written: 'unknown'` when the store
 * could not look (the database stayed out of reach): read the session before appending again. An
 * append that committed although its acknowledgement was lost is found and resolves instead.
 */
export class SessionAppendInterruptedError extends SessionError {
  override readonly name: string = 'SessionAppendInterruptedError'
  readonly written: false | 'unknown'

  readonly [SESSION_APPEND_INTERRUPTED_ERROR] = true

  /** True for a `SessionAppendInterruptedError` from any copy of this package (not for other `SessionError`s). */
  static override is(value: unknown): value is SessionAppendInterruptedError {
    return hasMarker(value, SESSION_APPEND_INTERRUPTED_ERROR)
  }

  constructor(sessionId: string, written: false | 'unknown', cause: unknown) {
    const outcome =
      written === false
        ? 'its records are not in the session, so nothing was written: append them again'
        : 'the store could not look whether its records were written: read the session before appending them again'
    super(
      'append_interrupted',
      `the connection to Postgres was lost during an append to ${sessionId}; ${outcome}`,
      {
        sessionId,
        cause,
      },
    )
    this.written = written
  }
}

/**
 * A stored record does not decode (a row edited by hand, or written by a newer Kode during a
 * rolling upgrade): the same `corrupt_history` code as the file store's `CorruptHistoryError`, with
 * the record's 1-based position in the session instead of a file line. Nothing is changed.
 */
export class CorruptRecordError extends SessionError {
  override readonly name: string = 'CorruptRecordError'
  /** The record's 1-based position in the session (its `seq`). */
  readonly seq: number

  readonly [CORRUPT_RECORD_ERROR] = true

  /** True for a `CorruptRecordError` from any copy of this package (not for other `SessionError`s). */
  static override is(value: unknown): value is CorruptRecordError {
    return hasMarker(value, CORRUPT_RECORD_ERROR)
  }

  constructor(sessionId: string, seq: number, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause)
    super('corrupt_history', `session ${sessionId}, record ${seq}: not a valid history record: ${detail}`, {
      sessionId,
      cause,
    })
    this.seq = seq
  }
}
