import { SessionError, SessionLockedError } from '../errors.js'

/** A lease's identity: compared by reference, so a released lease never matches a later one. */
export type LeaseToken = object

/**
 * Which sessions of one store are leased to a writer (see `SessionStore.acquire`). Kept per store
 * on purpose: a second store in the same process is kept out by the store's own cross-process
 * mechanism (the file store's lock file), so no process-wide registry is needed.
 */
export class LeaseRegistry {
  readonly #held = new Map<string, LeaseToken>()

  /** Takes the session's lease, synchronously, so of two concurrent callers exactly one wins. */
  take(sessionId: string): LeaseToken {
    this.assertFree(sessionId)
    const token: LeaseToken = {}
    this.#held.set(sessionId, token)
    return token
  }

  /** Throws `session_locked` while any lease on the session is held. */
  assertFree(sessionId: string): void {
    if (this.#held.has(sessionId)) throw new SessionLockedError(sessionId, undefined, undefined, 'this-store')
  }

  /** Throws unless `token` is the session's current lease. */
  assertCurrent(sessionId: string, token: LeaseToken): void {
    if (this.#held.get(sessionId) !== token) {
      throw new SessionError('store_closed', `the lease on session ${sessionId} was released`, { sessionId })
    }
  }

  /** Gives the lease back; false when `token` no longer held it. */
  give(sessionId: string, token: LeaseToken): boolean {
    if (this.#held.get(sessionId) !== token) return false
    this.#held.delete(sessionId)
    return true
  }

  /** Forgets every lease (the store closed). */
  clear(): void {
    this.#held.clear()
  }
}
