import type { ApprovalDecision, PendingApproval, TaskOutcome, UserInput } from '@kode/core'
import { type HistoryEvent, joinText, type TaskFinishReason } from '@kode/protocol'
import { DurableTaskError } from './errors.js'

/** What a durable task does: a new user input, or carrying the session's task on (`agent.continue`). */
export type DurableTask =
  | { kind: 'run'; sessionId: string; input: UserInput }
  | { kind: 'continue'; sessionId: string; approvals?: ApprovalDecision[] }

/**
 * What an execution of a task's workflow does, decided from the session's history under its lease:
 * the first execution starts the task; one after a crash carries it on (or reports it, when it had
 * finished and only the workflow's own end was lost).
 */
export type TaskPlan =
  /** `messageId`: the id the input's user message is persisted under (see `planTask`). */
  | { kind: 'run'; input: UserInput; messageId: string }
  | { kind: 'continue'; approvals: ApprovalDecision[] | undefined }
  | { kind: 'finished'; outcome: TaskOutcome }

/**
 * Plans an execution. A new input's task is found by its user message, persisted under `inputId`
 * (the same in every execution of the workflow): until that message is in the history, the task
 * has not begun, whatever other tasks wrote meanwhile; from it to its `task_metadata` (the one
 * naming `inputId`, or, when no other user message came in between, the first that names no input:
 * a continuation's) are its records. A task whose worker died and that another task's input then
 * superseded (that task settled its calls) never ends: it fails with `DurableTaskError`
 * `task_superseded`, also when that task's end names no input (a plain `agent.run`'s). A
 * continuation's records are those after `base`, the session's record count when the workflow
 * first ran (recorded by DBOS, so every execution sees the same).
 */
export function planTask(
  task: DurableTask,
  history: readonly HistoryEvent[],
  base: number,
  inputId: string,
): TaskPlan {
  if (task.kind === 'run') {
    const at = history.findIndex(
      (record) => 'role' in record && record.role === 'user' && record.id === inputId,
    )
    if (at === -1) return { kind: 'run', input: task.input, messageId: inputId }
    const own = history.slice(at)
    /** The first user message after the input: its own (steering) or another task's input. */
    let next: string | undefined
    for (const [i, record] of own.entries()) {
      if ('role' in record) {
        if (i > 0 && record.role === 'user') next ??= record.id
        continue
      }
      if (record.type !== 'task_metadata') continue
      if (record.inputId === inputId)
        return { kind: 'finished', outcome: finishedOutcome(task.sessionId, own.slice(0, i + 1)) }
      // An end naming no input is ours when it carried our task on (`agent.continue`'s, or one
      // written before ends named their input); after another user message it may be the end of
      // a plain `agent.run` that began there (its input is not named either): not ours.
      if (record.inputId === undefined && next === undefined)
        return { kind: 'finished', outcome: finishedOutcome(task.sessionId, own.slice(0, i + 1)) }
      throw new DurableTaskError(
        'task_superseded',
        `the task of input ${inputId} stopped with its worker, and the task of input ${record.inputId ?? next} ` +
          'began on its session before it was carried on',
      )
    }
    return { kind: 'continue', approvals: undefined }
  }
  const own = history.slice(base)
  const finished = own.findLastIndex((record) => !('role' in record) && record.type === 'task_metadata')
  if (finished >= 0)
    return { kind: 'finished', outcome: finishedOutcome(task.sessionId, own.slice(0, finished + 1)) }
  // Decisions already recorded by an execution that died are not given twice.
  const decided = new Set<string>()
  for (const record of own) {
    if (!('role' in record) && record.type === 'approval_decision') decided.add(record.toolCallId)
  }
  const approvals = task.approvals?.filter((decision) => !decided.has(decision.toolCallId))
  return { kind: 'continue', approvals: approvals && approvals.length > 0 ? approvals : undefined }
}

/**
 * The outcome of a task that finished before its workflow could record it (the worker died in
 * between), read from its records: they end with its `task_metadata`.
 */
export function finishedOutcome(sessionId: string, records: readonly HistoryEvent[]): TaskOutcome {
  const last = records.at(-1)
  if (!last || 'role' in last || last.type !== 'task_metadata') {
    throw new Error('a finished task ends with its task_metadata record')
  }
  let text = ''
  let reason: TaskFinishReason = 'completed'
  let errorMessage: string | undefined
  const pending = new Map<string, PendingApproval>()
  for (const record of records) {
    if ('role' in record) {
      if (record.role === 'assistant') {
        text = joinText(record.parts)
        if (record.stopReason === 'aborted') reason = 'aborted'
      } else if (record.role === 'tool') {
        pending.delete(record.toolCallId)
        if (record.status === 'aborted') reason = 'aborted'
      }
      continue
    }
    switch (record.type) {
      case 'interrupt':
        reason = 'aborted'
        break
      case 'error':
        reason = 'error'
        errorMessage = record.message
        break
      case 'approval_request':
        pending.set(record.toolCallId, {
          toolCallId: record.toolCallId,
          toolName: record.toolName,
          arguments: record.arguments,
        })
        break
      case 'approval_decision':
        pending.delete(record.toolCallId)
        break
      default:
        break
    }
  }
  const outcome: TaskOutcome = { sessionId, reason, text, metadata: last.metadata }
  if (pending.size > 0) {
    outcome.reason = 'awaiting_approval'
    outcome.pendingApprovals = [...pending.values()]
  } else if (reason === 'error' && errorMessage !== undefined) outcome.errorMessage = errorMessage
  return outcome
}
