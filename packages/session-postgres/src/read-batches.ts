import { decodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import { type ReadBatchesOptions, readBatchSize } from '@kode/session'
import { storeClosed } from './errors.js'
import type { Statements } from './statements.js'
import type { StorePool } from './store-pool.js'

/** What `readBatches` needs from its store. */
export interface ReadBatchesContext {
  pool: StorePool
  sql: Statements
  /** Refuses once the store is closed, checks the id, creates the schema on first use. */
  open(sessionId: string): Promise<void>
  closed(): boolean
  notFound(sessionId: string): Error
}

/**
 * Reads a session's history a page at a time (see `SessionStore.readBatches`): the record count
 * first, then pages by position up to it, each page one short query, so no connection is held
 * between batches and appends committed meanwhile are not read (the result is the history as
 * it was when the read began). A session deleted during the read fails with `session_not_found`.
 */
export async function* readSessionBatches(
  context: ReadBatchesContext,
  sessionId: string,
  options: ReadBatchesOptions = {},
): AsyncGenerator<HistoryEvent[]> {
  const { signal } = options
  const batchSize = readBatchSize(options)
  signal?.throwIfAborted()
  await context.open(sessionId)
  const { pool, sql } = context
  const info = await pool.query(sql.info, [sessionId])
  if (info.rows.length === 0) throw context.notFound(sessionId)
  const count = Number((info.rows[0] as { record_count: number | string }).record_count)
  for (let next = 0; next < count; ) {
    signal?.throwIfAborted()
    if (context.closed()) throw storeClosed()
    const { rows } = await pool.query(sql.follow, [sessionId, next, Math.min(batchSize, count - next)])
    // The records of a session only grow while it exists: fewer rows than counted means it went.
    if (rows.length === 0) throw context.notFound(sessionId)
    const batch = (rows as { seq: number; record: string }[]).map((row) => decodeHistoryEvent(row.record))
    next = (rows[rows.length - 1] as { seq: number }).seq
    signal?.throwIfAborted()
    yield batch
  }
}
