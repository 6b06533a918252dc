import { type SessionInfo, sessionNotFound } from '@kode/session'
import { infoOf, type SessionRow } from './rows.js'
import type { Statements } from './statements.js'
import type { StorePool } from './store-pool.js'

/**
 * Merges `patch` (a `patchParam`) into a session's metadata in one transaction, kept only when
 * the result reads as metadata: a row whose `meta` already held a field of the wrong shape (edited
 * by hand) fails with `corrupt_metadata` and is left as it was. `undefined` when `meta` was no
 * object and was put right before it was read again: the caller tries once more.
 */
export async function updateMeta(
  pool: StorePool,
  sql: Statements,
  sessionId: string,
  patch: string,
): Promise<SessionInfo | undefined> {
  return pool.transaction(async (client) => {
    const { rows } = await client.query(sql.update, [sessionId, patch])
    if (rows[0]) return infoOf(rows[0] as SessionRow)
    // Missing, or its meta column is no object (which `||` would turn into an array).
    const current = (await client.query(sql.info, [sessionId])).rows[0] as SessionRow | undefined
    if (!current) throw sessionNotFound(sessionId)
    infoOf(current)
    return undefined
  })
}
