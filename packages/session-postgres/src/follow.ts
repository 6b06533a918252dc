import {
  type FollowedRecord,
  type FollowOptions,
  followStart,
  sessionGoneWhile,
  sessionNotFound,
} from '@kode/session'
import { decodeStoredRecord } from './decode-record.js'
import { type ReadPosition, readPage } from './history-page.js'
import type { FeedListener } from './listener.js'
import type { Statements } from './statements.js'
import type { StorePool } from './store-pool.js'

/** How many records one read of a followed history fetches at most. */
const PAGE = 500

/** Options of the Postgres store's `follow`. */
export interface PostgresFollowOptions extends FollowOptions {
  /**
   * The `incarnation` of the records seen before, when resuming with `from`: if the session was
   * deleted and created again under its id since, following fails with `session_not_found`
   * instead of carrying on with the new history's records at the old one's positions.
   */
  incarnation?: string | undefined
  /**
   * Waits for a session that does not exist instead of failing with `session_not_found`: once it
   * is created, its records are followed from the first (its first append wakes the follower; a
   * session created empty is seen at the next read, within `followPollMs`). A session created and
   * deleted again while waited for fails the follow with `session_not_found` when the follower
   * heard of it: an append or the delete was committed while the store's notification connection
   * listened (it listens before the first read). One created and deleted while that connection
   * was down goes unnoticed. With `incarnation` (a session seen before), a missing session fails
   * at once, as without this option: it was deleted.
   */
  untilCreated?: boolean | undefined
}

/** A followed record, with the incarnation of the session it belongs to. */
export interface PostgresFollowedRecord extends FollowedRecord {
  /**
   * The session's incarnation: a value of its own, another for a session created again under the
   * same id. Keep it with the position and pass it back with `from` when following again.
   */
  readonly incarnation: string
}

/** What `follow` needs from its store. */
export interface FollowContext {
  pool: StorePool
  sql: Statements
  listener: FeedListener
  /** Refuses once the store is closed, checks the id, creates the schema on first use. */
  open(sessionId: string): Promise<void>
  closed(): boolean
}

/** How a follower hears that the session it followed went (see `sessionGoneWhile`). */
const FOLLOWED = 'since it was followed; read it again'
/** How a follower waiting for a session hears that it was created and went meanwhile. */
const AWAITED = 'while its creation was awaited'

/**
 * Follows a session's history across hosts: reads the records after the last one seen, and when
 * there are none, waits for a notification of a committed append (or a lost notification
 * connection, or the poll interval) and reads again from the same position. Positions come from
 * the records themselves, so the switch from the stored history to the live tail can neither skip
 * nor repeat one, and a missed notification only delays a record until the next read. Each read
 * names the session's incarnation, so a follower resuming with `from` and the incarnation it saw
 * learns that the session was created again meanwhile; the check of the last record read
 * (`readPage`) tells a follower that stayed running.
 */
export async function* followSession(
  context: FollowContext,
  sessionId: string,
  options: PostgresFollowOptions = {},
): AsyncGenerator<PostgresFollowedRecord> {
  const { signal } = options
  const position: ReadPosition = { next: followStart(options.from), last: undefined }
  let incarnation = options.incarnation
  if (incarnation !== undefined && typeof incarnation !== 'string') {
    throw new TypeError(`follow: incarnation must be a string, got ${typeof incarnation}`)
  }
  /** Throws unless the session read is the incarnation followed (the first one read, when none was given). */
  const same = (read: string) => {
    incarnation ??= read
    if (read !== incarnation) throw sessionGoneWhile(sessionId, FOLLOWED)
  }
  await context.open(sessionId)
  const { pool, sql } = context
  // Subscribed before the first read: whatever is committed after that read wakes this follower.
  const subscription = context.listener.subscribe(sessionId)
  const awaitCreation = options.untilCreated === true && incarnation === undefined
  // A session created and deleted before the first read is heard of only by a connection that
  // listened already.
  if (awaitCreation) await context.listener.listening()
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
        // The last record read is not where it was: the session went, maybe came again.
        if (!page) throw sessionGoneWhile(sessionId, FOLLOWED)
        return page
      })
      if (!rows) return
      if (rows.length === 0) {
        const info = await quietly(() => pool.query(sql.info, [sessionId]))
        if (!info) return
        if (info.rows.length === 0) {
          // A session seen before, and missing now, was deleted.
          if (!awaitCreation || incarnation !== undefined) throw sessionNotFound(sessionId)
          // Heard of since the last read and missing again: created and deleted meanwhile.
          if (subscription.heard()) throw sessionGoneWhile(sessionId, AWAITED)
          await subscription.changed(signal)
          continue
        }
        same((info.rows[0] as { incarnation: string }).incarnation)
        await subscription.changed(signal)
        continue
      }
      for (const row of rows) {
        if (signal?.aborted || context.closed()) return
        same(row.incarnation)
        // seq counts from 1: the record at index `position.next` has seq `position.next + 1`.
        yield {
          index: row.seq - 1,
          record: decodeStoredRecord(sessionId, row.seq, row.record),
          incarnation: row.incarnation,
        }
        position.next = row.seq
        position.last = row.record
      }
    }
  } finally {
    subscription.close()
  }
}
