import { SessionError } from '@kode/session'
import pg from 'pg'
import type { EncodedBatch } from './encoded-batch.js'
import { SessionAppendInterruptedError } from './errors.js'
import type { Statements } from './statements.js'
import type { StorePool } from './store-pool.js'

/** How many fresh connections the store tries for looking at an interrupted append's records. */
const LOOKS = 3

/**
 * Whether `error` leaves a statement's outcome open: the connection was lost (a socket error, an
 * end, a client timeout) or the server ended it (`57P01` after `pg_terminate_backend`, `57P02`, or
 * a connection exception, class `08`). Postgres may have committed before the answer was lost.
 * Any other error Postgres reported means the statement was rolled back.
 */
export function connectionLost(error: unknown): boolean {
  if (SessionError.is(error) || !(error instanceof Error)) return false
  if (!reportedByPostgres(error)) return true
  const code = error.code ?? ''
  return code.startsWith('08') || code === '57P01' || code === '57P02'
}

/**
 * Whether Postgres reported `error` (an ErrorResponse). Told by its shape, not `instanceof`: a
 * host's pool may come from another copy of pg, whose `DatabaseError` is another class.
 */
function reportedByPostgres(error: Error): error is pg.DatabaseError {
  if (error instanceof pg.DatabaseError) return true
  const { code, severity } = error as { code?: unknown; severity?: unknown }
  return typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
}

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
  const client = await pool.connect()
  let failure: unknown
  try {
    await client.query('begin')
    // The lost connection's statement may still run: it holds the session's row until it commits
    // or rolls back, and this waits for that. (One still on its way to Postgres over a connection
    // broken one way only is not waited for; it cannot be told apart from one never sent.)
    await client.query(sql.lockSession, [sessionId])
    const { rows } = await client.query(sql.batchStored, [sessionId, batch.json, batch.count])
    await client.query('commit')
    return rows.length > 0
  } catch (error) {
    failure = error
    await client.query('rollback').catch(() => {})
    throw error
  } finally {
    client.release(failure instanceof Error ? failure : undefined)
  }
}
