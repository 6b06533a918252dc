import {
  type ApprovalDecision,
  pendingApprovals,
  readStructuredOutput,
  type TaskOutcome,
  type UserInput,
} from '@kode/core'
import {
  type AssistantMessage,
  type HistoryEvent,
  joinText,
  type TaskFinishReason,
  type TaskMetadataRecord,
} from '@kode/protocol'
import type { TSchema } from '@sinclair/typebox'
import { DurableTaskError } from './errors.js'

/**
 * What a durable task does: a new user input, or carrying the session's task on (`agent.continue`).
 * `output` names the structured-output schema it asks for (one of `DurableAgentsOptions.outputs`).
 */
export type DurableTask =
  | { kind: 'run'; sessionId: string; input: UserInput; output?: string }
  | { kind: 'continue'; sessionId: string; approvals?: ApprovalDecision[]; output?: string }

/**
 * What an execution of a task's workflow does, decided from the session's history under its lease:
 * the first execution starts the task; one after a crash carries it on (or reports it, when it had
 * finished and only the workflow's own end was lost).
 */
export type TaskPlan =
  /** `messageId`: the id the input's user message is persisted under (see `planTask`). */
  | { kind: 'run'; input: UserInput; messageId: string }
  /** `inputId`: carrying on a new input's task, that input's id, for its end to name too. */
  | { kind: 'continue'; approvals: ApprovalDecision[] | undefined; inputId?: string }
  | { kind: 'finished'; outcome: TaskOutcome }

/**
 * Plans an execution. A new input's task is found by its user message, persisted under `inputId`
 * (the same in every execution of the workflow): until that message is in the history, the task
 * has not begun, whatever other tasks wrote meanwhile; from it to its `task_metadata`, the one
 * naming `inputId`, are its records. Its end names it whether the task ran in one go or was carried
 * on after a crash (`agent.continue({ inputId })`), so user messages in between (steering, a
 * structured-output correction) do not matter. A task whose worker died and that another task
 * then superseded (a new input settled its calls) never ends: the first end after its input names
 * another input or none (a plain `agent.run`'s or `agent.continue`'s), and it fails with
 * `DurableTaskError` `task_superseded`. A continuation's records are those after `base`, the
 * session's record count when the workflow first ran (recorded by DBOS, so every execution sees
 * the same), up to the first `task_metadata` after it; one that names an input is a new input's
 * task that superseded the continuation. `output` is the schema the task asks for: a finished
 * task's outcome carries the structured answer read back from its records.
 */
export function planTask(
  task: DurableTask,
  history: readonly HistoryEvent[],
  base: number,
  inputId: string,
  output?: TSchema,
): TaskPlan {
  if (task.kind === 'run') {
    const at = history.findIndex(
      (record) => 'role' in record && record.role === 'user' && record.id === inputId,
    )
    if (at === -1) return { kind: 'run', input: task.input, messageId: inputId }
    const own = history.slice(at)
    const end = own.findIndex((record) => !('role' in record) && record.type === 'task_metadata')
    if (end === -1) {
      // Another durable task began after this one's worker died and died in its turn, before its
      // end: carrying this task on would carry that one's input on under this task's name.
      const other = laterTaskInput(own.slice(1))
      if (other !== undefined) {
        throw new DurableTaskError(
          'task_superseded',
          `the task of input ${inputId} stopped with its worker, and the task of input ${other} began on its session before it was carried on`,
        )
      }
      return (
        pausedOutcome(task.sessionId, own, undefined) ?? { kind: 'continue', approvals: undefined, inputId }
      )
    }
    const ended = own[end] as TaskMetadataRecord
    if (ended.inputId === inputId) {
      return { kind: 'finished', outcome: finishedOutcome(task.sessionId, own.slice(0, end + 1), output) }
    }
    throw new DurableTaskError('task_superseded', superseded(inputId, ended, own.slice(1, end)))
  }
  const own = history.slice(base)
  // The first end after `base` is this task's: later ones are tasks that ran on the session after
  // it (while the workflow's own end, lost with its worker, waited for the reaper).
  const finished = own.findIndex((record) => !('role' in record) && record.type === 'task_metadata')
  if (finished >= 0) {
    const ended = own[finished] as TaskMetadataRecord
    // A continuation names no input: an end that names one is a new input's task, which began
    // after this one's worker died and settled its calls.
    if (ended.inputId !== undefined) {
      throw new DurableTaskError(
        'task_superseded',
        `the continued task stopped with its worker, and the task of input ${ended.inputId} began on its session before it was carried on`,
      )
    }
    return { kind: 'finished', outcome: finishedOutcome(task.sessionId, own.slice(0, finished + 1), output) }
  }
  // A continuation has no input: one of a durable task after `base` is another task's, begun after
  // this one's worker died (and not ended: its worker died too).
  const other = laterTaskInput(own)
  if (other !== undefined) {
    throw new DurableTaskError(
      'task_superseded',
      `the continued task stopped with its worker, and the task of input ${other} began on its session before it was carried on`,
    )
  }
  // Decisions already recorded by an execution that died are not given twice. A decision naming
  // its session is matched in that session only: two sub-agents' calls may share an id.
  const decided: DecidedCall[] = []
  for (const record of own) {
    if (!('role' in record) && record.type === 'approval_decision') {
      decided.push({ toolCallId: record.toolCallId, sessionId: record.sessionId })
    }
  }
  const approvals = task.approvals?.filter(
    (decision) => !decided.some((call) => decides(decision, call, task.sessionId)),
  )
  const given = approvals && approvals.length > 0 ? approvals : undefined
  return pausedOutcome(task.sessionId, own, given) ?? { kind: 'continue', approvals: given }
}

/** What the id a durable task's input is persisted under ends with (see `inputIdOf`). */
const INPUT_SUFFIX = ':input'

/**
 * The id a task's input is persisted under: its workflow's, so that every execution of it finds the
 * same message, and no other task's.
 */
export function inputIdOf(workflowId: string): string {
  return `${workflowId}${INPUT_SUFFIX}`
}

/**
 * The id of the first user message in `records` that is a durable task's input (see `inputIdOf`).
 * A plain `agent.run`'s input cannot be told from a steering message, and is not found.
 */
function laterTaskInput(records: readonly HistoryEvent[]): string | undefined {
  for (const record of records) {
    if ('role' in record && record.role === 'user' && record.id.endsWith(INPUT_SUFFIX)) return record.id
  }
  return undefined
}

/**
 * A task whose worker died as it paused for approval: calls wait for a decision, and the task was
 * given none for them (the decisions it had were recorded before it paused again). Carrying it on
 * would fail (`agent.continue` needs a decision for every waiting call), and nothing is left to run
 * until the user decides: it is reported paused, as its worker would have reported it, and nothing
 * is written (its accounting died with its worker: no turn ran in this execution). The host's
 * `continue` with the decisions carries it on.
 */
function pausedOutcome(
  sessionId: string,
  records: readonly HistoryEvent[],
  approvals: readonly ApprovalDecision[] | undefined,
): TaskPlan | undefined {
  const waiting = pendingApprovals(records)
  if (waiting.length === 0) return undefined
  if (approvals?.some((decision) => waiting.some((call) => decides(decision, call, sessionId))))
    return undefined
  let text = ''
  for (const record of records)
    if ('role' in record && record.role === 'assistant') text = joinText(record.parts)
  const outcome: TaskOutcome = {
    sessionId,
    reason: 'awaiting_approval',
    text,
    metadata: { main: { sessionId, durationMs: 0, turnCount: 0 }, subAgents: [] },
    pendingApprovals: waiting,
  }
  return { kind: 'finished', outcome }
}

/** A call by its id and the session it waits in (none for the session's own calls). */
type DecidedCall = { toolCallId: string; sessionId?: string | undefined }

/**
 * Whether `decision` is one on `call` of session `sessionId`'s history: the same call id, and the
 * session it names (its own, or none, for the session's own calls), when it names one.
 */
function decides(decision: ApprovalDecision, call: DecidedCall, sessionId: string): boolean {
  if (decision.toolCallId !== call.toolCallId) return false
  const named = decision.sessionId
  if (named === undefined) return true
  return named === sessionId ? call.sessionId === undefined : call.sessionId === named
}

/** Why a task's first end after its input is another task's: which task that was, if it says. */
function superseded(inputId: string, ended: TaskMetadataRecord, between: readonly HistoryEvent[]): string {
  const stopped = `the task of input ${inputId} stopped with its worker, and`
  if (ended.inputId !== undefined) {
    return `${stopped} the task of input ${ended.inputId} began on its session before it was carried on`
  }
  // A plain `agent.run` names no input: its user message is the first after ours.
  const next = between.find((record) => 'role' in record && record.role === 'user')
  if (next) return `${stopped} the task of input ${next.id} began on its session before it was carried on`
  return `${stopped} a task that named no input (a plain agent.continue) carried it on instead`
}

/** The reasons whose outcome says what stopped the task (`errorMessage`), as a live run's does. */
const STOPPED_BY_ERROR: ReadonlySet<TaskFinishReason> = new Set([
  'error',
  'max_turns',
  'structured_output_invalid',
])

/**
 * The outcome of a task that finished before its workflow could record it (the worker died in
 * between), read from its records: they end with its `task_metadata`. A task that asked for
 * structured `output` and completed gets the answer back as its `output`, checked against the
 * schema as the engine reads it (see `readStructuredOutput`).
 */
export function finishedOutcome(
  sessionId: string,
  records: readonly HistoryEvent[],
  output?: TSchema,
): TaskOutcome {
  const last = records.at(-1)
  if (!last || 'role' in last || last.type !== 'task_metadata') {
    throw new Error('a finished task ends with its task_metadata record')
  }
  let text = ''
  let answer: AssistantMessage | undefined
  let reason: TaskFinishReason = 'completed'
  let errorMessage: string | undefined
  for (const record of records) {
    if ('role' in record) {
      if (record.role === 'assistant') {
        answer = record
        text = joinText(record.parts)
        if (record.stopReason === 'aborted') reason = 'aborted'
      } else if (record.role === 'tool' && record.status === 'aborted') reason = 'aborted'
      continue
    }
    switch (record.type) {
      case 'interrupt':
        reason = 'aborted'
        break
      case 'error':
        // A compaction whose summary failed did not fail the task: the turn went on without it.
        if (record.compaction) break
        reason = 'error'
        errorMessage = record.message
        break
      default:
        break
    }
  }
  // Read as the engine reads them: by session and call id, a sub-agent's call with its session (two
  // sub-agents' calls may share an id), so the host can decide each.
  const pending = pendingApprovals(records)
  // The task's end says why it ended; in histories written before it did, the records tell what
  // they can (a turn limit or an invalid structured answer then reads as an error).
  const ended = last.reason ?? (pending.length > 0 ? 'awaiting_approval' : reason)
  const outcome: TaskOutcome = { sessionId, reason: ended, text, metadata: last.metadata }
  if (ended === 'awaiting_approval') outcome.pendingApprovals = pending
  else if (errorMessage !== undefined && STOPPED_BY_ERROR.has(ended)) outcome.errorMessage = errorMessage
  if (output !== undefined && ended === 'completed') {
    const value = readStructuredOutput(output, answer)
    if (value !== undefined) outcome.output = value
  }
  return outcome
}
