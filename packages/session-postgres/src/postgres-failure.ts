import { SessionError } from '@kode/session'
import pg from 'pg'

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
 * Whether Postgres rolled the statement back only for meeting another transaction, and asks for it
 * to be made again: a serialization failure (`40001`, in a database whose transactions default to
 * `repeatable read` or `serializable`, when another host changed the session's row meanwhile) or a
 * deadlock (`40P01`).
 */
export function mustRetry(error: unknown): boolean {
  if (!(error instanceof Error) || !reportedByPostgres(error)) return false
  return error.code === '40001' || error.code === '40P01'
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
