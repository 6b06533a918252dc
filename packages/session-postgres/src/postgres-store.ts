import { hostname } from 'node:os'
import type { HistoryEvent } from '@kode/protocol'
import {
  assertSessionId,
  assertSessionInit,
  assertSessionPatch,
  type CreateSessionInit,
  checkListOptions,
  type ListSessionsOptions,
  type LockHolder,
  type LockOwner,
  type ReadBatchesOptions,
  SessionError,
  type SessionLease,
  SessionLockedError,
  type SessionPatch,
  type SessionStore,
  type StoreClock,
  type StoreWarning,
  sessionNotFound,
  storeClosed,
  warningReporter,
} from '@kode/session'
import pg from 'pg'
import { confirmedAppend } from './append-outcome.js'
import { decodeStoredRecord } from './decode-record.js'
import { encodeBatch } from './encoded-batch.js'
import { SessionLeasedError, SessionLeaseLostError } from './errors.js'
import { followSession, type PostgresFollowedRecord, type PostgresFollowOptions } from './follow.js'
import { InFlight } from './in-flight.js'
import { type LeaseContext, PostgresLease } from './lease.js'
import { listSessions } from './list-sessions.js'
import { FeedListener } from './listener.js'
import { readSessionBatches } from './read-batches.js'
import { infoOf, metaParam, patchParam, type SessionRow } from './rows.js'
import { assertSchemaName, ensureSchema } from './schema.js'
import { KeyedQueue } from './serial.js'
import { feedChannel, statements } from './statements.js'
import { StorePool } from './store-pool.js'
import { updateMeta } from './update-meta.js'

/** Default `leaseMs`: how long a writer that stopped renewing keeps the session from others. */
export const DEFAULT_LEASE_MS = 30_000
/** Default `maxRecordBytes`: the largest encoded history record the store accepts. */
export const DEFAULT_MAX_RECORD_BYTES = 8 * 1024 * 1024
/** Default `queryTimeoutMs`: how long a statement of the store's own pool may go unanswered. */
export const DEFAULT_QUERY_TIMEOUT_MS = 60_000

/** Default `followPollMs`: how often a follower reads again when no notification came. */
export const DEFAULT_FOLLOW_POLL_MS = 30_000

/** Options of `createPostgresSessionStore`. Pass `pool` or `connectionString`. */
export interface PostgresSessionStoreOptions extends StoreClock {
  /** A `pg` pool the host owns (shared with its other Postgres users); the store never ends it. */
  pool?: pg.Pool
  /** Where to connect when no `pool` is given; the store then owns its pool and ends it on `close()`. */
  connectionString?: string
  /** The Postgres schema holding the store's tables, created on first use. Default `kode`. */
  schema?: string
  /**
   * How long a writer's lease lasts without renewal, in milliseconds (default 30 000). A live
   * lease renews itself every third of this; a writer that died frees its sessions after this long.
   */
  leaseMs?: number
  /** The largest encoded record accepted, in bytes (default 8 MiB); larger ones fail `record_too_large`. */
  maxRecordBytes?: number
  /**
   * How often a follower with nothing new reads again although no notification came, in
   * milliseconds (default 30 000): a safety net only, since every committed append notifies. While
   * the notification connection is down, followers read every second until it is back.
   */
  followPollMs?: number
  /**
   * How long a statement of the pool the store makes (with `connectionString`) may go unanswered,
   * in milliseconds (default 60 000): after that, pg gives up on it and the store treats its
   * connection as lost (an append then looks whether it was written). A connection whose network
   * path died silently (no reset reached the host) otherwise leaves its statement, and the task
   * that waits for it, hanging for ever, while its lease renews on other connections. Getting a
   * connection has the same limit (pg's `connectionTimeoutMillis`): a server that accepts and never
   * answers, or a pool whose connections all stay busy. For a `pool` the host passes, set pg's
   * `query_timeout` and `connectionTimeoutMillis` on it instead.
   */
  queryTimeoutMs?: number
  /**
   * Told about data that was ignored: `list()` leaving out a session whose `meta` column does not
   * hold a session's metadata (`unreadable_session`, its `file` naming the table: `<schema>.sessions`).
   */
  onWarning?: ((warning: StoreWarning) => void) | undefined
}

/**
 * The Postgres store: the whole `SessionStore` contract, and `follow`, which sees the appends of
 * every host sharing the database.
 */
export interface PostgresSessionStore extends SessionStore {
  /**
   * Follows a session's history across hosts (see `SessionStore.follow`): the stored records from
   * `from` on, then every record any host appends, as it is committed. Postgres `LISTEN/NOTIFY`
   * wakes the follower; the records themselves are read from the table, so none is skipped or
   * repeated, also when a notification or the notification connection is lost. While anything
   * follows, the store holds one connection of its own for `LISTEN` (shared by all its followers),
   * opened beside the pool from the pool's options, so it never takes one of the pool's connections.
   * Each record names the session's `incarnation`: resume with `{ from, incarnation }` to learn
   * (`session_not_found`) that the session was deleted and created again while you were away.
   */
  follow(sessionId: string, options?: PostgresFollowOptions): AsyncIterable<PostgresFollowedRecord>
  /**
   * Reads a session's history like `read`, together with the session's `incarnation` (the one its
   * `follow` names), both from one statement: they always belong together, even when another host
   * deletes the session and creates it again under its id meanwhile. Follow on from the end of it
   * with `{ from: history.length, incarnation }` to learn (`session_not_found`) of a session
   * created again since, also one that holds fewer records than were read. Fails with
   * `session_not_found` for a missing session.
   */
  readWithIncarnation(sessionId: string): Promise<PostgresSessionHistory>
  /**
   * Reads a session's history in batches (see `SessionStore.readBatches`), a page of `batchSize`
   * records per query by position: the history as it was when the read began. Every page is
   * checked against the incarnation the read began with: a session deleted, or deleted and created
   * again under its id, during the read fails it with `session_not_found`, and no record of the
   * new session is handed out.
   */
  readBatches(sessionId: string, options?: ReadBatchesOptions): AsyncIterable<HistoryEvent[]>
}

/** What the Postgres store's `readWithIncarnation` returns: one session's history and its incarnation. */
export interface PostgresSessionHistory {
  /** The session's whole history, in append order, as `read` returns it. */
  history: HistoryEvent[]
  /** The incarnation of the session the history was read from, as its followed records name it. */
  incarnation: string
}

/**
 * A `SessionStore` in a shared Postgres, so any of several host processes can serve any session.
 * One writer per session across hosts: `acquire` takes a lease with a fencing epoch (bumped by the
 * database's clock), and every append is one statement that checks it, so a writer that lost its
 * lease gets `session_lease_lost` and writes nothing. Each append is durable once it resolves.
 */
export function createPostgresSessionStore(options: PostgresSessionStoreOptions): PostgresSessionStore {
  if ((options.pool === undefined) === (options.connectionString === undefined)) {
    throw new TypeError('createPostgresSessionStore needs exactly one of `pool` and `connectionString`')
  }
  const schema = options.schema ?? 'kode'
  assertSchemaName(schema)
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
  if (!Number.isInteger(leaseMs) || leaseMs < 10)
    throw new TypeError('leaseMs must be an integer of at least 10')
  const maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES
  // NaN would compare false with every size and quietly lift the limit.
  if (!Number.isSafeInteger(maxRecordBytes) || maxRecordBytes < 1)
    throw new TypeError('maxRecordBytes must be a positive integer')
  const followPollMs = options.followPollMs ?? DEFAULT_FOLLOW_POLL_MS
  if (!Number.isInteger(followPollMs) || followPollMs < 1)
    throw new TypeError('followPollMs must be a positive integer')
  const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS
  if (!Number.isInteger(queryTimeoutMs) || queryTimeoutMs < 1)
    throw new TypeError('queryTimeoutMs must be a positive integer')
  if (options.pool !== undefined && options.queryTimeoutMs !== undefined)
    throw new TypeError("queryTimeoutMs is for a pool the store makes: set pg's query_timeout on your pool")
  const now = options.now ?? Date.now
  const warn = warningReporter(options.onWarning)
  const createId = options.createId ?? (() => globalThis.crypto.randomUUID())
  const ownPool = options.pool === undefined
  const shared = options.pool ?? ownedPool(options.connectionString, queryTimeoutMs)
  const pool = new StorePool(shared)
  /** The operations under way: close() lets them finish before it releases leases and ends the pool. */
  const operations = new InFlight()
  const operation = <T>(work: () => Promise<T>): Promise<T> => operations.track(work())
  const sql = statements(schema)
  const queue = new KeyedQueue()
  const owner = globalThis.crypto.randomUUID()
  const host = hostname()
  const held = new Set<PostgresLease>()
  const listener = new FeedListener(pool, feedChannel(schema), followPollMs)
  let ready: Promise<void> | undefined
  let closed = false

  /** Refuses once closed, validates the id, and creates the schema on first use. */
  const open = async (sessionId?: unknown) => {
    if (closed) throw storeClosed()
    if (sessionId !== undefined) assertSessionId(sessionId)
    ready ??= ensureSchema(pool, schema).catch((error: unknown) => {
      ready = undefined
      throw error
    })
    await ready
  }

  /** Why a write guarded by "no live lease" was refused: the session is missing or held. */
  const refusal = async (sessionId: string): Promise<SessionError | undefined> => {
    const { rows } = await pool.query(sql.holder, [sessionId])
    const row = rows[0] as
      | {
          lease_owner: string | null
          lease_holder: LockHolder | null
          lease_expires_at: Date | null
          free: boolean
        }
      | undefined
    if (!row) return sessionNotFound(sessionId)
    if (row.free) return undefined
    if (row.lease_owner === owner)
      return new SessionLockedError(sessionId, undefined, undefined, 'this-store')
    const holder = row.lease_holder ?? undefined
    const where: LockOwner = !holder
      ? 'unknown'
      : holder.hostname !== host
        ? 'other-host'
        : holder.pid === process.pid
          ? 'this-process'
          : 'other-process'
    return new SessionLeasedError(sessionId, holder, where, row.lease_expires_at ?? undefined)
  }

  /**
   * Runs a write guarded by "no live lease" and returns its row. When it matched nothing, says
   * why; a lease released in between is no reason, so the write is tried again.
   */
  const guarded = async (
    sessionId: string,
    write: () => Promise<{ rows: Record<string, unknown>[] }>,
  ): Promise<Record<string, unknown>> => {
    for (;;) {
      const { rows } = await write()
      if (rows[0]) return rows[0]
      const refused = await refusal(sessionId)
      if (refused) throw refused
    }
  }

  const context: LeaseContext = {
    pool,
    sql,
    queue,
    owner,
    leaseMs,
    append(sessionId, events, { epoch, incarnation }) {
      return operation(async () => {
        await open(sessionId)
        const batch = encodeBatch(sessionId, events, maxRecordBytes)
        await queue.run(sessionId, () =>
          confirmedAppend(pool, sql, sessionId, batch, async () => {
            const params = [sessionId, batch.json, batch.count, now(), epoch, owner, leaseMs, incarnation]
            const { rows } = await pool.query(sql.leasedAppend, params)
            if (rows.length === 0) {
              const missing = (await pool.query(sql.info, [sessionId])).rows.length === 0
              throw missing ? sessionNotFound(sessionId) : new SessionLeaseLostError(sessionId, epoch)
            }
          }),
        )
      })
    },
    forget: (lease) => held.delete(lease),
  }

  /** The session's history and incarnation, read by one statement (see `readWithIncarnation`). */
  const readHistory = async (sessionId: string): Promise<PostgresSessionHistory> => {
    await open(sessionId)
    const { rows } = await pool.query(sql.read, [sessionId])
    const first = rows[0] as { incarnation: string } | undefined
    if (!first) throw sessionNotFound(sessionId)
    const history = (rows as { seq: number | null; record: string | null }[]).flatMap((row) =>
      row.record === null ? [] : [decodeStoredRecord(sessionId, row.seq!, row.record)],
    )
    return { history, incarnation: first.incarnation }
  }

  return {
    maxRecordBytes,
    create(init: CreateSessionInit = {}) {
      return operation(async () => {
        const id = init.id ?? createId()
        await open(id)
        assertSessionInit(init, id)
        const { rows } = await pool.query(sql.create, [id, metaParam(init), now()])
        if (!rows[0])
          throw new SessionError('session_exists', `session ${id} already exists`, { sessionId: id })
        return infoOf(rows[0] as SessionRow)
      })
    },
    append(sessionId: string, events: readonly HistoryEvent[]) {
      return operation(async () => {
        await open(sessionId)
        const batch = encodeBatch(sessionId, events, maxRecordBytes)
        await queue.run(sessionId, () =>
          confirmedAppend(pool, sql, sessionId, batch, async () => {
            await guarded(sessionId, () =>
              pool.query(sql.append, [sessionId, batch.json, batch.count, now()]),
            )
          }),
        )
      })
    },
    acquire(sessionId: string): Promise<SessionLease> {
      return operation(async () => {
        await open(sessionId)
        const params = [sessionId, owner, process.pid, host, leaseMs]
        const row = await guarded(sessionId, () => pool.query(sql.acquire, params))
        const grant = { epoch: Number(row.lease_epoch), incarnation: String(row.incarnation) }
        const lease = new PostgresLease(context, sessionId, grant)
        held.add(lease)
        return lease
      })
    },
    read(sessionId: string) {
      return operation(async () => (await readHistory(sessionId)).history)
    },
    readWithIncarnation(sessionId: string) {
      return operation(() => readHistory(sessionId))
    },
    info(sessionId: string) {
      return operation(async () => {
        await open(sessionId)
        const { rows } = await pool.query(sql.info, [sessionId])
        return rows[0] ? infoOf(rows[0] as SessionRow) : undefined
      })
    },
    update(sessionId: string, patch: SessionPatch) {
      return operation(async () => {
        await open(sessionId)
        assertSessionPatch(patch, sessionId)
        const param = patchParam(patch)
        // In the session's queue, as the file store does: updates and appends through this store
        // apply in call order (the pool would otherwise run them side by side, last come last).
        return queue.run(sessionId, async () => {
          for (;;) {
            // Throws `corrupt_metadata`, changing nothing; a row put right in between is updated on
            // the next turn.
            const info = await updateMeta(pool, sql, sessionId, param)
            if (info) return info
          }
        })
      })
    },
    list(listOptions?: ListSessionsOptions) {
      return operation(async () => {
        const query = checkListOptions(listOptions)
        await open()
        return listSessions(pool, schema, query, warn)
      })
    },
    delete(sessionId: string) {
      return operation(async () => {
        await open(sessionId)
        await queue.run(sessionId, () =>
          guarded(sessionId, () => pool.query(sql.delete, [sessionId])).catch((error: unknown) => {
            // Deleting a session that does not exist does nothing.
            if (!SessionError.is(error) || error.code !== 'session_not_found') throw error
          }),
        )
      })
    },
    readBatches(sessionId: string, readOptions?: ReadBatchesOptions) {
      return readSessionBatches({ pool, sql, open, closed: () => closed }, sessionId, readOptions)
    },
    follow(sessionId: string, followOptions?: PostgresFollowOptions) {
      return followSession({ pool, sql, listener, open, closed: () => closed }, sessionId, followOptions)
    },
    async close() {
      if (closed) return
      closed = true
      const listening = listener.close()
      // In this order: an operation under way may still take a lease, which must not outlive the
      // store; then the pool ends only once nothing of the store waits on it.
      await operations.settled()
      await queue.idle()
      await Promise.allSettled([...held].map((lease) => lease.release()))
      await listening
      await pool.close()
      if (ownPool) await shared.end()
    },
  }
}

/**
 * The store's own pool, for a `connectionString`. An idle pooled connection that the server ends
 * (a restart, `pg_terminate_backend`, a proxy's idle timeout) is emitted as the pool's `'error'`,
 * which would crash the process with no listener; pg has already dropped that client, and the next
 * query opens a fresh one, so there is nothing to do. A pool the host passes in is the host's to
 * watch.
 */
function ownedPool(connectionString: string | undefined, queryTimeoutMs: number): pg.Pool {
  // Getting a connection has the same limit: a server that accepts and never answers (a proxy
  // whose backend is gone) would otherwise hold every call of the store for ever.
  const pool = new pg.Pool({
    connectionString,
    query_timeout: queryTimeoutMs,
    connectionTimeoutMillis: queryTimeoutMs,
  })
  pool.on('error', () => {})
  return pool
}
