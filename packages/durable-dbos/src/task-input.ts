import type { ApprovalDecision, UserInput } from '@kode/core'
import { type HistoryEvent, roundTripHistoryEvent, type UserMessage } from '@kode/protocol'
import { assertSessionId, unstampedRecordBytesOver } from '@kode/session'
import { DurableTaskError } from './errors.js'
import type { DurableTask } from './task-plan.js'

/**
 * The input of a new task as the workflow records it, checked before anything is recorded: what
 * the session would refuse (a `CodecError` inside the workflow, after the session was created) or
 * DBOS could not serialize (a `BigInt`, a cycle) fails the call with `DurableTaskError`
 * `invalid_input`, and nothing is started. Parts are recorded as their JSON (after any `toJSON`),
 * as the session would persist them, so every execution of the workflow runs what was checked.
 */
export function checkedInput(input: UserInput): UserInput {
  const parts = typeof input === 'string' ? [{ type: 'text' as const, text: input }] : input
  let written: UserMessage
  try {
    if (typeof input !== 'string' && !Array.isArray(input)) throw new TypeError('not a string or an array')
    const message = { role: 'user', id: 'input', createdAt: 0, parts: [...parts] }
    written = roundTripHistoryEvent(message as HistoryEvent) as UserMessage
  } catch (cause) {
    throw new DurableTaskError(
      'invalid_input',
      `the task's input is not valid user input: ${describe(cause)}`,
      {
        cause,
      },
    )
  }
  return typeof input === 'string' ? input : written.parts
}

/**
 * Refuses an input whose user message would be larger than the store takes (its `maxRecordBytes`,
 * when it says one): the task would fail on its first append, after its workflow and session were
 * created. The message is measured as the store measures it (its encoded line, in UTF-8), under
 * the id it is persisted with, and with the longest `createdAt` a clock can give, so an input this
 * lets through is never too large (one within a few bytes of the limit may be refused).
 */
export function checkedInputSize(input: UserInput, inputId: string, maxRecordBytes: unknown): void {
  if (typeof maxRecordBytes !== 'number' || !Number.isFinite(maxRecordBytes)) return
  const parts = typeof input === 'string' ? [{ type: 'text' as const, text: input }] : input
  const bytes = unstampedRecordBytesOver(
    { role: 'user', id: inputId, createdAt: 0, parts: [...parts] },
    maxRecordBytes,
  )
  if (bytes > 0) {
    throw new DurableTaskError(
      'invalid_input',
      `the task's input is ${bytes} bytes as a history record, over the store's limit of ${maxRecordBytes} bytes (maxRecordBytes): keep large payloads such as images out of the input, or raise the limit`,
    )
  }
}

/** The decisions of `continue`, checked the same way: each names a call and says yes or no. */
export function checkedApprovals(approvals: unknown): ApprovalDecision[] {
  if (!Array.isArray(approvals)) {
    throw new DurableTaskError('invalid_input', 'approvals must be an array of decisions')
  }
  return approvals.map((decision: unknown, index) => {
    const { toolCallId, approved, reason, sessionId } = (decision ?? {}) as Record<string, unknown>
    if (
      typeof toolCallId !== 'string' ||
      typeof approved !== 'boolean' ||
      (reason !== undefined && typeof reason !== 'string') ||
      (sessionId !== undefined && typeof sessionId !== 'string')
    ) {
      throw new DurableTaskError(
        'invalid_input',
        `approvals[${index}] must be { toolCallId: string, approved: boolean, reason?: string, sessionId?: string }`,
      )
    }
    // The session tells apart two sub-agents' calls that share an id (see `ApprovalDecision`).
    return {
      toolCallId,
      approved,
      ...(reason !== undefined ? { reason } : {}),
      ...(sessionId !== undefined ? { sessionId } : {}),
    }
  })
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * The workflow's argument, checked before the task touches anything: `start` and `continue` check
 * what they record, but DBOS lets any service enqueue the workflow by name with arguments of its
 * own (`DBOSClient.enqueue`), and a workflow recorded by another version may carry a kind this one
 * does not know. Such a task fails with `DurableTaskError` `invalid_input` rather than being taken
 * for a `continue` of its session, or failing on a `TypeError`.
 */
export function checkedTask(value: unknown): DurableTask {
  if (typeof value !== 'object' || value === null) throw notATask('its argument is not an object')
  const { kind, sessionId, output } = value as Record<string, unknown>
  try {
    assertSessionId(sessionId)
  } catch (cause) {
    throw new DurableTaskError('invalid_input', (cause as Error).message, { cause })
  }
  if (output !== undefined && typeof output !== 'string') {
    throw notATask('output must be the name of a schema of outputs')
  }
  const named = output === undefined ? {} : { output }
  switch (kind) {
    case 'run':
      return { kind, sessionId, input: checkedInput((value as { input: UserInput }).input), ...named }
    case 'continue': {
      const { approvals } = value as { approvals?: unknown }
      return {
        kind,
        sessionId,
        ...(approvals === undefined ? {} : { approvals: checkedApprovals(approvals) }),
        ...named,
      }
    }
    default:
      throw notATask(`kind must be "run" or "continue", not ${JSON.stringify(kind) ?? 'missing'}`)
  }
}

function notATask(why: string): DurableTaskError {
  return new DurableTaskError('invalid_input', `the task is not a Kode durable task: ${why}`)
}
