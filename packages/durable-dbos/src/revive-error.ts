import { AgentError, type AgentErrorCode } from '@kode/core'
import { SessionError, type SessionErrorCode } from '@kode/session'
import { DurableTaskError } from './errors.js'

/** Every `AgentError` code (a `Record`, so a code core adds cannot be left out). */
const AGENT_CODES: Record<AgentErrorCode, true> = {
  agent_busy: true,
  agent_closed: true,
  already_iterated: true,
  invalid_options: true,
  invalid_tool: true,
  unknown_approval: true,
  approval_already_decided: true,
  approvals_missing: true,
  nothing_to_continue: true,
  input_too_large: true,
  tool_call_ended: true,
}

/** Every `SessionError` code, the same way. */
const SESSION_CODES: Record<SessionErrorCode, true> = {
  invalid_session_id: true,
  session_not_found: true,
  session_exists: true,
  session_locked: true,
  session_lease_lost: true,
  invalid_record: true,
  invalid_metadata: true,
  invalid_list_options: true,
  record_too_large: true,
  append_interrupted: true,
  corrupt_history: true,
  corrupt_metadata: true,
  empty_session: true,
  message_not_found: true,
  store_closed: true,
  symlink_refused: true,
  hard_link_refused: true,
  not_a_regular_file: true,
  session_broken: true,
  history_replaced: true,
}

/** The names of `SessionError` and of its subclasses in Kode's stores. */
const SESSION_ERROR_NAMES = new Set([
  'SessionError',
  'SessionLockedError',
  'CorruptHistoryError',
  'SessionLeasedError',
  'SessionLeaseLostError',
  'SessionAppendInterruptedError',
  'CorruptRecordError',
])

/**
 * The error a workflow threw, as DBOS gives it back. DBOS records errors as JSON and rebuilds them
 * as plain `Error`s (same `name`, `message`, `code`, other plain fields, causes), which the `is`
 * of Kode's error classes would not know: a `DurableTaskError`, an `AgentError` (a `continue` whose
 * decisions do not fit the history) or a `SessionError` (the task's writer taken over) becomes one
 * again, with its code, message, cause and stack. A `SessionError` keeps its subclass's name and
 * its `sessionId`, not its class. Anything else is returned as it is.
 */
export function reviveError(value: unknown): unknown {
  const durable = DurableTaskError.revive(value)
  if (durable !== value || !(value instanceof Error)) return durable
  if (AgentError.is(value) || SessionError.is(value)) return value
  const { code, sessionId } = value as { code?: unknown; sessionId?: unknown }
  if (typeof code !== 'string') return value
  const options = value.cause === undefined ? {} : { cause: value.cause }
  let revived: Error
  if (value.name === 'AgentError' && Object.hasOwn(AGENT_CODES, code)) {
    revived = new AgentError(code as AgentErrorCode, value.message, options)
  } else if (SESSION_ERROR_NAMES.has(value.name) && Object.hasOwn(SESSION_CODES, code)) {
    revived = new SessionError(code as SessionErrorCode, value.message, {
      ...options,
      ...(typeof sessionId === 'string' ? { sessionId } : {}),
    })
    revived.name = value.name
  } else return value
  if (value.stack !== undefined) revived.stack = value.stack
  return revived
}
