import type { EncodedBatch } from './encoded-batch.js'
import { SessionAppendInterruptedError } from './errors.js'
import { connectionLost } from './postgres-failure.js'
import type { Statements } from './statements.js'
import type { StorePool } from './store-pool.js'

/** How many fresh connections the store tries for looking at an interrupted append's records. */
const LOOKS = 3

/**
 * Runs an append's statement. When the connection is lost meanwhile, the append may have
 * committed with its acknowledgement lost, so the store looks on a fresh connection whether the
 * batch is in the session (its records, in order, at consecutive positions): if so the append
 * resolves, so that neither the engine nor a host retrying appends writes it twice; if not it
 * fails with `SessionAppendInterruptedError` (`written: false`), and when the store cannot look,
 * with `written: 'unknown'`.
 */
export async function confirmedAppend(
  pool: StorePool,
  sql: Statements,
  sessionId: string,
  batch: EncodedBatch,
  write: () => Promise<void>,
): Promise<void> {
  try {
    await write()
  } catch (error) {
    if (!connectionLost(error)) throw error
    // No records: the history is as it would be either way.
    if (batch.count === 0) return
    let lookFailed: unknown
    for (let look = 0; look < LOOKS; look++) {
      try {
        if (await batchStored(pool, sql, sessionId, batch)) return
        throw new SessionAppendInterruptedError(sessionId, false, error)
      } catch (failure) {
        if (failure instanceof SessionAppendInterruptedError) throw failure
        lookFailed = failure
        // Only a lost connection is worth another look (the pool may hand out another dead one).
        if (!connectionLost(failure)) break
      }
    }
    throw new SessionAppendInterruptedError(sessionId, 'unknown', lookFailed ?? error)
  }
}

/** Whether the session holds the batch's records in order at consecutive positions, once no append to it runs. */
async function batchStored(
  pool: StorePool,
  sql: Statements,
  sessionId: string,
  batch: EncodedBatch,
): Promise<boolean> {
  return pool.transaction(async (client) => {
    // The lost connection's statement may still run: it holds the session's row until it commits
    // or rolls back, and this waits for that. (One still on its way to Postgres over a connection
    // broken one way only is not waited for; it cannot be told apart from one never sent.)
    await client.query(sql.lockSession, [sessionId])
    const { rows } = await client.query(sql.batchStored, [sessionId, batch.json, batch.count])
    return rows.length > 0
  })
}
