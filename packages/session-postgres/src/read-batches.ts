import type { HistoryEvent } from '@kode/protocol'
import {
  type ReadBatchesOptions,
  readBatchSize,
  sessionGoneWhile,
  sessionNotFound,
  storeClosed,
} from '@kode/session'
import { decodeStoredRecord } from './decode-record.js'
import { type ReadPosition, readPage } from './history-page.js'
import type { Statements } from './statements.js'
import type { StorePool } from './store-pool.js'

/** What `readBatches` needs from its store. */
export interface ReadBatchesContext {
  pool: StorePool
  sql: Statements
  /** Refuses once the store is closed, checks the id, creates the schema on first use. */
  open(sessionId: string): Promise<void>
  closed(): boolean
}

/**
 * Reads a session's history a page at a time (see `SessionStore.readBatches`): the record count and
 * the session's incarnation first, in one statement, then pages by position up to that count, each
 * page one short query, so no connection is held between batches and appends committed meanwhile
 * are not read (the result is the history as it was when the read began). Every page names the
 * incarnation of the session it was read from: a session deleted during the read, also one created
 * again under the same id meanwhile, fails it with `session_not_found` (`sessionGoneWhile`)
 * before any record of another session is handed out. Positions alone cannot tell: the new history
 * may be longer, or start with the very records already read.
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
  if (info.rows.length === 0) throw sessionNotFound(sessionId)
  const session = info.rows[0] as { record_count: number | string; incarnation: string }
  const count = Number(session.record_count)
  const position: ReadPosition = { next: 0, last: undefined }
  while (position.next < count) {
    signal?.throwIfAborted()
    if (context.closed()) throw storeClosed()
    const rows = await readPage(pool, sql, sessionId, position, Math.min(batchSize, count - position.next))
    // The records of a session only grow while it exists: none, not the ones read, or another
    // incarnation's, means it went.
    if (!rows || rows.length === 0 || rows.some((row) => row.incarnation !== session.incarnation)) {
      throw sessionGoneWhile(sessionId, 'during a batched read of its history; read it again')
    }
    const batch = rows.map((row) => decodeStoredRecord(sessionId, row.seq, row.record))
    const lastRow = rows[rows.length - 1]!
    position.next = lastRow.seq
    position.last = lastRow.record
    signal?.throwIfAborted()
    yield batch
  }
}
