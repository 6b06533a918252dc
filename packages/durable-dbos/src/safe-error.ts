import { Error as DBOSErrors } from '@dbos-inc/dbos-sdk'
import { redactCredentials } from '@kode/protocol/helpers'
import { SessionError } from '@kode/session'
import { DurableTaskError } from './errors.js'

/**
 * What a task may hand DBOS of an error it throws: DBOS stores it as JSON in Postgres (every field
 * and every cause) and logs it, and `result()` gives it to the host. An error from elsewhere (an
 * HTTP client's, a custom model client's) may carry the request that failed, headers and all, so
 * it is kept as its name, message, `code` and stack only, credentials redacted, and its causes the
 * same way. A `DurableTaskError` stays one (its cause made safe); DBOS's own errors pass as they
 * are, since DBOS tells a cancellation by its class. A `SessionError` keeps its `sessionId` too, so
 * `result()` can give it back as one (see `reviveError`).
 */
export function safeError(error: unknown): unknown {
  if (error instanceof DBOSErrors.DBOSError) return error
  return copy(error, new Set())
}

function copy(value: unknown, seen: Set<unknown>): Error {
  if (!(value instanceof Error)) {
    return new Error(redactCredentials(typeof value === 'string' ? value : `a thrown ${typeof value}`))
  }
  seen.add(value)
  const cause = value.cause === undefined || seen.has(value.cause) ? undefined : copy(value.cause, seen)
  const message = redactCredentials(value.message)
  let safe: Error
  if (DurableTaskError.is(value)) safe = new DurableTaskError(value.code, message, { cause })
  else {
    safe = Object.assign(
      new Error(message, cause === undefined ? undefined : { cause }),
      codeOf(value),
      sessionOf(value),
    )
    safe.name = value.name
  }
  if (value.stack !== undefined) safe.stack = redactCredentials(value.stack)
  return safe
}

/** The error's `code`, when it is a plain string or number (`ECONNRESET`, an HTTP status). */
function codeOf(error: Error): { code?: string | number } {
  const { code } = error as { code?: unknown }
  if (typeof code === 'string') return { code: redactCredentials(code) }
  if (typeof code === 'number') return { code }
  return {}
}

/** The `sessionId` a `SessionError` names. */
function sessionOf(error: Error): { sessionId?: string } {
  if (!SessionError.is(error) || typeof error.sessionId !== 'string') return {}
  return { sessionId: error.sessionId }
}
