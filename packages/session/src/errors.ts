const SESSION_ERROR = Symbol.for('kode.SessionError')
const CORRUPT_HISTORY_ERROR = Symbol.for('kode.CorruptHistoryError')
const SESSION_LOCKED_ERROR = Symbol.for('kode.SessionLockedError')

/**
 * Whether `value` carries `marker`: how an error class recognises its instances from any copy of
 * its package (its ESM and CJS builds, two installs), where `instanceof` fails.
 */
export function hasErrorMarker(value: unknown, marker: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true
}

/** What went wrong, one value per failure a caller may want to handle differently. */
export type SessionErrorCode =
  | 'invalid_session_id'
  | 'session_not_found'
  | 'session_exists'
  | 'session_locked'
  /**
   * A lease's writer was taken over: a database lease expired and another writer acquired the
   * session, or the file store's lock file was moved away and another process took the session.
   */
  | 'session_lease_lost'
  | 'invalid_record'
  /** `create` or `update` was given metadata of the wrong shape (a title that is not a string). */
  | 'invalid_metadata'
  /**
   * `list` was given options it cannot use (a `limit` that is not a positive integer, an `after`
   * without its times or id); refused before the store reads anything.
   */
  | 'invalid_list_options'
  /** A record is larger than the store accepts (a database store's per-record limit). */
  | 'record_too_large'
  /**
   * A database store lost its connection during an append and could not find the records
   * afterwards (`written: false`), or could not look (`written: 'unknown'`).
   */
  | 'append_interrupted'
  | 'corrupt_history'
  | 'corrupt_metadata'
  | 'empty_session'
  | 'message_not_found'
  | 'store_closed'
  | 'symlink_refused'
  /**
   * The file store found a session file with more than one name (a hard link), which it will not
   * write: an append or a repair would change the file under its other names too.
   */
  | 'hard_link_refused'
  /**
   * The file store found something other than a regular file (a FIFO, a socket, a device, a
   * directory) where one of a session's files belongs.
   */
  | 'not_a_regular_file'
  /**
   * A failed append could not be undone (the file store's truncate failed too): the session's file
   * may hold records that were never acknowledged, so this store refuses every operation on the
   * session until it is opened again by a new store (see docs/sessions.md).
   */
  | 'session_broken'
  /**
   * The file store's writer found that the session's history file is no longer the file it holds
   * open: it was replaced (renamed over, as `mv` and many editors do), removed, or a link took its
   * place. The append or update was not written; the store's next call opens the file there now.
   */
  | 'history_replaced'

/**
 * A session store or session helper refused an operation. `code` says why; `sessionId` names the
 * session when there is one. `SessionError.is(e)` recognises one from any copy of this package.
 */
export class SessionError extends Error {
  override readonly name: string = 'SessionError'
  readonly code: SessionErrorCode
  readonly sessionId: string | undefined
  readonly [SESSION_ERROR] = true

  constructor(code: SessionErrorCode, message: string, options?: { sessionId?: string; cause?: unknown }) {
    super(message, { cause: options?.cause })
    this.code = code
    this.sessionId = options?.sessionId
  }

  /** True for a `SessionError` (or subclass) from any copy of this package. */
  static is(value: unknown): value is SessionError {
    return hasErrorMarker(value, SESSION_ERROR)
  }
}

/**
 * A line in the middle of a session's history file is not a valid history record. Nothing was
 * read past it and nothing was written: the file is left exactly as found for a human to fix.
 * `line` is 1-based; `cause` is the `CodecError` that names the offending field.
 */
export class CorruptHistoryError extends SessionError {
  override readonly name: string = 'CorruptHistoryError'
  readonly file: string
  readonly line: number
  readonly [CORRUPT_HISTORY_ERROR] = true

  /** True for a `CorruptHistoryError` from any copy of this package (not for other `SessionError`s). */
  static override is(value: unknown): value is CorruptHistoryError {
    return hasErrorMarker(value, CORRUPT_HISTORY_ERROR)
  }

  constructor(sessionId: string, file: string, line: number, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause)
    super('corrupt_history', `${file}:${line}: not a valid history record: ${detail}`, { sessionId, cause })
    this.file = file
    this.line = line
  }
}

/** Who holds a session's writer lock. */
export interface LockHolder {
  pid: number
  hostname: string
  /** Milliseconds since the epoch, by the holder's clock. */
  acquiredAt: number
}

/** Who holds a session that a writer was refused, as far as this process can tell. */
export type LockOwner =
  /** Another writer of the same store in this process (an agent's running task, a held lease). */
  | 'this-store'
  /** Another store in this process that has not been closed. */
  | 'this-process'
  /** Another process on this host. */
  | 'other-process'
  /** A process on another host sharing the directory. */
  | 'other-host'
  /** A lock file that could not be read. */
  | 'unknown'

/**
 * Another live writer holds the session: only one writer may append to, update or delete a session
 * at a time, in one process or across processes. The message says who holds it and what to do;
 * `owner` says the same for code. `lockFile` is the lock file (stores without files have none).
 */
export class SessionLockedError extends SessionError {
  override readonly name: string = 'SessionLockedError'
  readonly lockFile: string | undefined
  readonly holder: LockHolder | undefined
  readonly owner: LockOwner
  readonly [SESSION_LOCKED_ERROR] = true

  /**
   * True for a `SessionLockedError` (or subclass, such as a database store's `SessionLeasedError`)
   * from any copy of this package; not for other `SessionError`s.
   */
  static override is(value: unknown): value is SessionLockedError {
    return hasErrorMarker(value, SESSION_LOCKED_ERROR)
  }

  constructor(
    sessionId: string,
    lockFile: string | undefined,
    holder: LockHolder | undefined,
    owner: LockOwner,
  ) {
    super('session_locked', lockedMessage(sessionId, lockFile, holder, owner), { sessionId })
    this.lockFile = lockFile
    this.holder = holder
    this.owner = owner
  }
}

function lockedMessage(
  sessionId: string,
  lockFile: string | undefined,
  holder: LockHolder | undefined,
  owner: LockOwner,
): string {
  const file = lockFile ? ` (lock file ${lockFile})` : ''
  const who = holder ? `process ${holder.pid} on ${holder.hostname}` : 'another process'
  const head = `session ${sessionId} is being written by`
  switch (owner) {
    case 'this-store':
      return `${head} another writer of this store (an agent running a task on it, or a lease not released yet): wait for that task to end, or use another session id (forkSession copies one)`
    case 'this-process':
      return `${head} another session store in this process${file}: close that store (store.close()) or share one store, so only one writes the session`
    case 'other-process':
      return `${head} ${who}${file}: wait for it to finish or stop it; once it no longer runs, its lock is removed by the next writer`
    case 'other-host':
      return `${head} ${who}${file}: this host cannot tell whether it still runs; if it does not, delete the lock file`
    case 'unknown':
      return `${head} ${who}${file}, whose lock cannot be read: if no Kode process writes this session, delete the lock file`
    default: {
      const never: never = owner
      return never
    }
  }
}

/** The `session_not_found` error every store and helper throws; `cause`: what told it so, if anything. */
export function sessionNotFound(sessionId: string, cause?: unknown): SessionError {
  return new SessionError('session_not_found', `no session ${sessionId}`, { sessionId, cause })
}

/**
 * The `session_not_found` error for a session that went while it was in use (`activity`: "during a
 * batched read of its history", "while it was exported"): deleted, or deleted and created again
 * under its id, so a session of that id may exist again. What was read of it is the old session's.
 */
export function sessionGoneWhile(sessionId: string, activity: string): SessionError {
  return new SessionError(
    'session_not_found',
    `session ${sessionId} was deleted (or deleted and created again under its id) ${activity}`,
    { sessionId },
  )
}

/**
 * The `session_broken` error: `cause` is the failure that kept a failed append from being undone;
 * `file` and `length`: where the acknowledged records end, so the file can be cut there by hand
 * when not even the metadata could record it.
 */
export function sessionBroken(sessionId: string, cause: unknown, file: string, length: number): SessionError {
  return new SessionError(
    'session_broken',
    `session ${sessionId} holds a failed append that could not be cut off: its records end at byte ${length} of ${file}. ` +
      'A new store cuts the rest off when session.json says so; if writing session.json failed too, ' +
      'cut the file to that length before the session is opened again',
    { sessionId, cause },
  )
}

/**
 * The `history_replaced` error: `file`, the session's history file, no longer names the file the
 * writer opened, so what it would append there no path would reach. Nothing was written, unless
 * `written`: the replacement landed while the append was being written, so its records went to the
 * old file, and reach the new one only if whatever replaced it copied them after that.
 */
export function historyReplaced(sessionId: string, file: string, written = false): SessionError {
  const what = written
    ? 'so the records of this append were written to the file this writer opened, not to the one there ' +
      'now (unless what replaced it was copied from it after they were written)'
    : 'so nothing was written'
  return new SessionError(
    'history_replaced',
    `session ${sessionId}: ${file} is no longer the file this writer opened (it was replaced, renamed ` +
      `or removed while the session was open), ${what}. The next call opens the file ` +
      'there now; what it holds is the history from then on',
    { sessionId },
  )
}

/** The `store_closed` error every store throws once closed. */
export function storeClosed(): SessionError {
  return new SessionError('store_closed', 'the session store is closed')
}
