import type { Statements } from './statements.js'
import type { StorePool } from './store-pool.js'

/**
 * A stored record: its position counts from 1 (`seq`), its text is its encoded JSON, and the
 * incarnation of the session holding it, read in the same statement.
 */
export interface StoredRecord {
  seq: number
  record: string
  incarnation: string
}

/** Where a reader of a history stands: how many records it has read, and the last one as stored. */
export interface ReadPosition {
  next: number
  last: string | undefined
}

/**
 * The records after a reader's position, at most `limit`; `undefined` when the session no longer
 * holds the last record the reader read. A read starts with that record because a session deleted
 * meanwhile no longer has it, and one created again under the same id has another record there (or
 * none): without the check the reader would carry on with another history's records at its
 * positions. Positions alone cannot tell, and records are never changed or removed otherwise.
 */
export async function readPage(
  pool: StorePool,
  sql: Statements,
  sessionId: string,
  position: ReadPosition,
  limit: number,
): Promise<StoredRecord[] | undefined> {
  const { next, last } = position
  if (last === undefined) {
    return (await pool.query(sql.follow, [sessionId, next, limit])).rows as StoredRecord[]
  }
  const [seen, ...after] = (await pool.query(sql.follow, [sessionId, next - 1, limit + 1]))
    .rows as StoredRecord[]
  return seen?.seq === next && seen.record === last ? after : undefined
}
