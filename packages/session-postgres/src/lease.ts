import type { HistoryEvent } from '@kode/protocol'
import { SessionError, type SessionLease } from '@kode/session'
import type { KeyedQueue } from './serial.js'
import type { Statements } from './statements.js'
import type { StorePool } from './store-pool.js'

/** What a lease needs from its store. */
export interface LeaseContext {
  pool: StorePool
  sql: Statements
  queue: KeyedQueue
  /** This store's identity in `lease_owner`. */
  owner: string
  leaseMs: number
  /**
   * Writes a batch under the lease's epoch, in the session's incarnation it was taken in (one
   * statement); throws `session_lease_lost`.
   */
  append(sessionId: string, events: readonly HistoryEvent[], grant: LeaseGrant): Promise<void>
  /** Forgets the lease in the store's list of held leases. */
  forget(lease: PostgresLease): void
}

/**
 * What `acquire` was granted: the fencing epoch, and the incarnation of the session it holds. Epochs
 * count per incarnation (a session created again under its id starts over), so the pair, not the
 * epoch alone, tells this lease from a later one of the same store.
 */
export interface LeaseGrant {
  epoch: number
  incarnation: string
}

/**
 * A writer's hold on a session: the fencing `epoch` it was granted, renewed in the background
 * every third of the lease so a live writer keeps it. A writer that stops (paused, partitioned,
 * killed) stops renewing; once the lease expired, another writer may take it and bump the epoch,
 * after which every append of this lease is refused.
 */
export class PostgresLease implements SessionLease {
  readonly sessionId: string
  readonly epoch: number
  readonly #incarnation: string
  readonly #context: LeaseContext
  readonly #timer: ReturnType<typeof setInterval>
  #released: Promise<void> | undefined

  constructor(context: LeaseContext, sessionId: string, grant: LeaseGrant) {
    this.#context = context
    this.sessionId = sessionId
    this.epoch = grant.epoch
    this.#incarnation = grant.incarnation
    this.#timer = setInterval(() => void this.#renew(), Math.max(1, Math.floor(context.leaseMs / 3)))
    // A lease must not keep a host process alive on its own.
    this.#timer.unref?.()
  }

  append(events: readonly HistoryEvent[]): Promise<void> {
    if (this.#released) {
      return Promise.reject(
        new SessionError('store_closed', `the lease on session ${this.sessionId} was released`, {
          sessionId: this.sessionId,
        }),
      )
    }
    return this.#context.append(this.sessionId, events, { epoch: this.epoch, incarnation: this.#incarnation })
  }

  release(): Promise<void> {
    this.#released ??= this.#release()
    return this.#released
  }

  async #release(): Promise<void> {
    clearInterval(this.#timer)
    const { pool, sql, queue, owner } = this.#context
    try {
      // After this lease's appends, so none of them is refused by its own release.
      await queue.run(this.sessionId, () =>
        pool.query(sql.release, [this.sessionId, this.epoch, owner, this.#incarnation]),
      )
    } finally {
      this.#context.forget(this)
    }
  }

  async #renew(): Promise<void> {
    const { pool, sql, owner, leaseMs } = this.#context
    // A failed renewal is not reported here: the next append checks the epoch and says so.
    await pool
      .query(sql.renew, [this.sessionId, this.epoch, owner, leaseMs, this.#incarnation])
      .catch(() => {})
  }
}
