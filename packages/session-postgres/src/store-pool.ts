import { storeClosed } from '@kode/session'
import type pg from 'pg'
import { InFlight } from './in-flight.js'

/**
 * The store's way to its pool. A pool ended while a query of it waits for a connection drops that
 * query without settling it, so a store operation racing `close()` would hang for ever: the store
 * ends its pool only once every query and checkout it started has settled, and from then on
 * refuses new ones with `store_closed`.
 */
export class StorePool {
  readonly #pool: pg.Pool
  readonly #running = new InFlight()
  #closed = false

  constructor(pool: pg.Pool) {
    this.#pool = pool
  }

  query(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    if (this.#closed) return Promise.reject(storeClosed())
    return this.#running.track(this.#pool.query(text, values))
  }

  /** Checks a connection out; the caller releases it. */
  connect(): Promise<pg.PoolClient> {
    if (this.#closed) return Promise.reject(storeClosed())
    return this.#running.track(this.#pool.connect())
  }

  /** Waits for every query and checkout under way, then refuses new ones. */
  async close(): Promise<void> {
    await this.#running.settled()
    this.#closed = true
  }
}
