const SESSION_ERROR = Symbol.for('kode.SessionError')

/** What went wrong, one value per failure a caller may want to handle differently. */
export type SessionErrorCode =
  | 'invalid_session_id'
  | 'session_not_found'
  | 'session_exists'
  | 'session_locked'
  | 'invalid_record'
  | 'corrupt_history'
  | 'corrupt_metadata'
  | 'empty_session'
  | 'message_not_found'
  | 'store_closed'

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
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[SESSION_ERROR] === true
    )
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

/**
 * Another live writer (another process, or another store instance in this one) holds the
 * session. Only one writer may append to, update or delete a session at a time. The message
 * says who holds it and what to do; `sameProcess` is true when the holder is another store in
 * this very process (release it with `agent.close()` or `store.close()`, or share one store).
 */
export class SessionLockedError extends SessionError {
  override readonly name: string = 'SessionLockedError'
  readonly lockFile: string
  readonly holder: LockHolder | undefined
  readonly sameProcess: boolean

  constructor(
    sessionId: string,
    lockFile: string,
    holder: LockHolder | undefined,
    options: { sameProcess?: boolean | undefined } = {},
  ) {
    const sameProcess = options.sameProcess === true
    super('session_locked', lockedMessage(sessionId, lockFile, holder, sameProcess), { sessionId })
    this.lockFile = lockFile
    this.holder = holder
    this.sameProcess = sameProcess
  }
}

function lockedMessage(
  sessionId: string,
  lockFile: string,
  holder: LockHolder | undefined,
  sameProcess: boolean,
): string {
  const session = `session ${sessionId}`
  if (sameProcess) {
    return (
      `${session} is already being written by another store in this process (pid ${holder?.pid}); ` +
      'a session has one writer at a time. Use one store for all the agents of a session, or ' +
      'release the session first: `await agent.close()` on the agent that wrote it, or ' +
      '`await store.close()` on its store.'
    )
  }
  if (!holder) {
    return (
      `${session} is locked by a writer whose lock file cannot be read (${lockFile}). If no ` +
      'process is writing this session (one that crashed while taking the lock), delete that file.'
    )
  }
  return (
    `${session} is being written by process ${holder.pid} on ${holder.hostname} (lock file ` +
    `${lockFile}); a session has one writer at a time. Wait for that process to finish or ` +
    'stop it. A lock whose process no longer runs on this host is removed on the next attempt; ' +
    'one from another host must be deleted by hand once its process is gone.'
  )
}

/** The `session_not_found` error every store and helper throws. */
export function sessionNotFound(sessionId: string): SessionError {
  return new SessionError('session_not_found', `no session ${sessionId}`, { sessionId })
}

/** The `store_closed` error every store throws once closed. */
export function storeClosed(): SessionError {
  return new SessionError('store_closed', 'the session store is closed')
}
