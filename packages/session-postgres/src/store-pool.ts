import { SessionError, storeClosed } from '@kode/session'
import pg from 'pg'
import { InFlight } from './in-flight.js'
import { mustRetry } from './postgres-failure.js'

/** How many times a statement Postgres rolled back for meeting another transaction is made at most. */
const TRIES = 10

/**
 * How the store's transactions begin. Its statements are written for `read committed`: one that
 * waits for a row another host changes goes on with the row as committed. A database whose
 * transactions default to `repeatable read` or `serializable` would fail it instead.
 */
const BEGIN = 'begin isolation level read committed'

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

  /**
   * Runs one statement in a transaction of its own. Made again when Postgres rolled it back for
   * meeting another transaction (`mustRetry`): in a database whose transactions default to
   * `repeatable read` or `serializable`, a statement that waited for a session's row another host
   * changed meanwhile fails so, though nothing of it was done.
   */
  query(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    if (this.#closed) return Promise.reject(storeClosed())
    return this.#running.track(this.#retried(() => this.#pool.query(text, values)))
  }

  /**
   * Runs `work` on one connection in a `read committed` transaction (see `BEGIN`), commits, and
   * releases the connection: as broken when anything but a refusal of the store's failed it.
   */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect()
    let failure: unknown
    try {
      await client.query(BEGIN)
      const result = await work(client)
      await client.query('commit')
      return result
    } catch (error) {
      failure = error
      await client.query('rollback').catch(() => {})
      throw error
    } finally {
      // A refusal is no fault of the connection; after any other failure (a statement timed out
      // may still run on it) it must not serve anyone else.
      client.release(failure instanceof Error && !SessionError.is(failure) ? failure : undefined)
    }
  }

  async #retried(run: () => Promise<pg.QueryResult>): Promise<pg.QueryResult> {
    for (let tries = 1; ; tries++) {
      try {
        return await run()
      } catch (error) {
        if (tries >= TRIES || !mustRetry(error)) throw error
      }
    }
  }

  /**
   * Checks a connection out; the caller releases it. While it is out, pg-pool listens to none of
   * its `'error'` events, and pg emits one when the server ends the connection (a restart,
   * `pg_terminate_backend`), also after failing the query under way: without a listener that
   * would crash the host. The query fails with it anyway; the connection goes back as broken.
   */
  connect(): Promise<pg.PoolClient> {
    if (this.#closed) return Promise.reject(storeClosed())
    // The callback form: pg-pool calls it as it hands the connection out, so the listener is in
    // place before pg reads on. A promise would resolve after the rest of the data that brought a
    // new connection's first ReadyForQuery, which may end with the server ending it.
    return this.#running.track(
      new Promise<pg.PoolClient>((resolve, reject) => {
        this.#pool.connect((error, client) => {
          if (client) resolve(watched(client))
          else reject(error)
        })
      }),
    )
  }

  /**
   * A connection of its own, outside the pool, made as the pool makes its connections (the pool's
   * client class and options): for `LISTEN`, which holds its connection for as long as anything
   * follows. Taken from the pool, it would starve the store's other queries in a small pool (with
   * `max: 1`, every append and read would wait for it for ever). The caller connects and ends it.
   */
  dedicatedClient(): pg.Client {
    if (this.#closed) throw storeClosed()
    const Client = (this.#pool as { Client?: new (config: pg.PoolConfig) => pg.Client }).Client ?? pg.Client
    return new Client(this.#pool.options)
  }

  /** Waits for every query and checkout under way, then refuses new ones. */
  async close(): Promise<void> {
    await this.#running.settled()
    this.#closed = true
  }
}

/** A checked-out connection that keeps an error it emits, and is released as broken after one. */
function watched(client: pg.PoolClient): pg.PoolClient {
  let lost: Error | undefined
  const onError = (error: Error) => {
    lost ??= error
  }
  client.on('error', onError)
  const release = client.release.bind(client)
  client.release = (error?: Error | boolean) => {
    // The pool listens again from the release on.
    release(error || lost)
    client.removeListener('error', onError)
  }
  return client
}
