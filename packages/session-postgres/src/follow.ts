import { decodeHistoryEvent } from '@kode/protocol'
import { type FollowedRecord, type FollowOptions, followStart, sessionNotFound } from '@kode/session'
import { type ReadPosition, readPage } from './history-page.js'
import type { FeedListener } from './listener.js'
import type { Statements } from './statements.js'
import type { StorePool } from './store-pool.js'

/** How many records one read of a followed history fetches at most. */
const PAGE = 500

/** What `follow` needs from its store. */
export interface FollowContext {
  pool: StorePool
  sql: Statements
  listener: FeedListener
  /** Refuses once the store is closed, checks the id, creates the schema on first use. */
  open(sessionId: string): Promise<void>
  closed(): boolean
}

/**
 * Follows a session's history across hosts: reads the records after the last one seen, and when
 * there are none, waits for a notification of a committed append (or a lost notification
 * connection, or the poll interval) and reads again from the same position. Positions come from
 * the records themselves, so the switch from the stored history to the live tail can neither skip
 * nor repeat one, and a missed notification only delays a record until the next read.
 */
export async function* followSession(
  context: FollowContext,
  sessionId: string,
  options: FollowOptions = {},
): AsyncGenerator<FollowedRecord> {
  const { signal } = options
  const position: ReadPosition = { next: followStart(options.from), last: undefined }
  await context.open(sessionId)
  const { pool, sql } = context
  // Subscribed before the first read: whatever is committed after that read wakes this follower.
  const subscription = context.listener.subscribe(sessionId)
  /** A read; one cut short by the store closing (its pool ended) ends the follow quietly. */
  const quietly = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read()
    } catch (error) {
      if (context.closed()) return undefined
      throw error
    }
  }
  try {
    while (!signal?.aborted && !context.closed()) {
      const rows = await quietly(async () => {
        const page = await readPage(pool, sql, sessionId, position, PAGE)
        if (!page) throw sessionNotFound(sessionId)
        return page
      })
      if (!rows) return
      if (rows.length === 0) {
        const info = await quietly(() => pool.query(sql.info, [sessionId]))
        if (!info) return
        if (info.rows.length === 0) throw sessionNotFound(sessionId)
        await subscription.changed(signal)
        continue
      }
      for (const row of rows) {
        if (signal?.aborted || context.closed()) return
        // seq counts from 1: the record at index `position.next` has seq `position.next + 1`.
        yield { index: row.seq - 1, record: decodeHistoryEvent(row.record) }
        position.next = row.seq
        position.last = row.record
      }
    }
  } finally {
    subscription.close()
  }
}
