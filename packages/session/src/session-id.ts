import { SessionError } from './errors.js'

// A session id becomes a directory name, so it may hold no separator, cannot be `.` or `..`,
// cannot start with a dot (hidden) or a dash (read as an option by shell tools), and cannot end
// with a dot (Windows drops it: `a.` would name the directory of `a`).
const SESSION_ID = /^(?:[A-Za-z0-9_]|[A-Za-z0-9_][A-Za-z0-9._-]{0,126}[A-Za-z0-9_-])$/

// Windows opens a device, not a directory, for these names whatever follows their first dot and
// in any case; refused by every store, so that an id moves between stores and machines.
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:\.|$)/i

/**
 * True when `id` is usable as a session id: 1-128 of `A-Z a-z 0-9 . _ -`, not starting with `.` or
 * `-`, not ending with `.`, and not a Windows device name (`con`, `prn`, `aux`, `nul`,
 * `com0`-`com9`, `lpt0`-`lpt9`, alone or before a dot, in any case).
 */
export function isValidSessionId(id: unknown): id is string {
  return typeof id === 'string' && SESSION_ID.test(id) && !WINDOWS_DEVICE.test(id)
}

/** Throws a `SessionError` (`invalid_session_id`) unless `id` is a valid session id. */
export function assertSessionId(id: unknown): asserts id is string {
  if (isValidSessionId(id)) return
  const shown =
    typeof id === 'string' ? JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id) : typeof id
  throw new SessionError(
    'invalid_session_id',
    `invalid session id ${shown}: use 1-128 characters from A-Z a-z 0-9 . _ -, not starting with . or -, not ending with . and not a Windows device name (con, prn, aux, nul, com0-9, lpt0-9)`,
  )
}
