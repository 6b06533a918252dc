import type { ApprovalDecision, PendingApproval, TaskOutcome, UserInput } from '@kode/core'
import { type HistoryEvent, joinText, type TaskFinishReason } from '@kode/protocol'

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
  | { kind: 'run'; input: UserInput }
  | { kind: 'continue'; approvals: ApprovalDecision[] | undefined }
  | { kind: 'finished'; outcome: TaskOutcome }

/**
 * Plans an execution. `base` is the session's record count when the task's workflow first ran
 * (recorded by DBOS, so every execution sees the same): the records after it are this task's.
 */
export function planTask(task: DurableTask, history: readonly HistoryEvent[], base: number): TaskPlan {
  const own = history.slice(base)
  const finished = own.findLastIndex((record) => !('role' in record) && record.type === 'task_metadata')
  if (finished >= 0)
    return { kind: 'finished', outcome: finishedOutcome(task.sessionId, own.slice(0, finished + 1)) }
  if (task.kind === 'run') {
    // The input is the task's first message: until it is in the history, the task has not begun.
    const begun = own.some((record) => 'role' in record && record.role === 'user')
    return begun ? { kind: 'continue', approvals: undefined } : { kind: 'run', input: task.input }
  }
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
