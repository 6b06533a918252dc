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
  if (isError(error) && error instanceof DBOSErrors.DBOSError) return error
  try {
    return copy(error, new Set())
  } catch {
    // A thrown proxy whose traps throw: nothing of it can be read safely.
    return new Error('a thrown value that cannot be read')
  }
}

function copy(value: unknown, seen: Set<unknown>): Error {
  if (!isError(value)) {
    return new Error(redactCredentials(typeof value === 'string' ? value : `a thrown ${typeof value}`))
  }
  seen.add(value)
  const original = field(value, 'cause')
  const cause = original === undefined || seen.has(original) ? undefined : copy(original, seen)
  // Whatever the thrown value holds is text here, or left out: a field that is not a string (or
  // whose getter throws) must not turn the task's failure into a TypeError of this copy.
  const message = redactCredentials(textOf(field(value, 'message')) ?? '')
  let safe: Error
  if (DurableTaskError.is(value)) safe = new DurableTaskError(value.code, message, { cause })
  else {
    safe = Object.assign(
      new Error(message, cause === undefined ? undefined : { cause }),
      codeOf(field(value, 'code')),
      sessionOf(value),
    )
    // The name is text DBOS keeps and logs like the message: redacted the same way.
    safe.name = redactCredentials(textOf(field(value, 'name')) || 'Error')
  }
  const stack = textOf(field(value, 'stack'))
  if (stack !== undefined) safe.stack = redactCredentials(stack)
  return safe
}

/** Whether `value` is an `Error` (false for a revoked proxy, whose prototype cannot be read). */
function isError(value: unknown): value is Error {
  try {
    return value instanceof Error
  } catch {
    return false
  }
}

/** A field of a thrown error, or `undefined` when reading it throws. */
function field(error: Error, key: string): unknown {
  try {
    return (error as unknown as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** The error's `code`, when it is a plain string or number (`ECONNRESET`, an HTTP status). */
function codeOf(code: unknown): { code?: string | number } {
  if (typeof code === 'string') return { code: redactCredentials(code) }
  if (typeof code === 'number') return { code }
  return {}
}

/** The `sessionId` a `SessionError` names. */
function sessionOf(error: Error): { sessionId?: string } {
  if (!SessionError.is(error) || typeof error.sessionId !== 'string') return {}
  return { sessionId: error.sessionId }
}
