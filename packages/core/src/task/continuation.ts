import { type HistoryEvent, type ToolCallPart, toolCallsOf } from '@kode/protocol'
import { AgentError } from '../errors.js'
import { errorOutcome, type ToolOutcome } from '../tools/tool-outcome.js'
import {
  type ApprovalDecision,
  callsNeedingApproval,
  checkDecisions,
  deniedOutcome,
  type PendingCall,
  pendingCalls,
  recordDecisions,
  SUPERSEDED_REASON,
} from './approval.js'
import type { TaskRuntime } from './runtime.js'
import { runCalls, type TaskState } from './turn.js'

/** The text of a call a task left unanswered when its process stopped. */
export const STOPPED_CALL_TEXT =
  'The task stopped before this tool call finished (its process ended); it may or may not have run.'

/** What `agent.continue` carries on, decided from the history before the task starts. */
export type Continuation =
  /** Calls awaited approval: the decisions, checked. */
  | { kind: 'approvals'; pending: PendingCall[]; decisions: Map<string, ApprovalDecision> }
  /** A task that never finished (its process died): the calls it left without a result. */
  | { kind: 'unfinished'; dangling: ToolCallPart[]; responseId: string | undefined }

/**
 * Reads what `continue` can do with the history; throws `AgentError` for decisions that do not
 * fit what is pending (see `checkDecisions`) and `nothing_to_continue` for a finished session.
 */
export function planContinuation(
  history: readonly HistoryEvent[],
  approvals: readonly ApprovalDecision[] | undefined,
): Continuation {
  const pending = pendingCalls(history)
  if (pending.length > 0 || (approvals !== undefined && approvals.length > 0)) {
    checkDecisions(history, pending, approvals ?? [])
    const decisions = new Map((approvals ?? []).map((decision) => [decision.toolCallId, decision]))
    return { kind: 'approvals', pending, decisions }
  }
  const lastEnd = history.findLastIndex((record) => !('role' in record) && record.type === 'task_metadata')
  const rest = history.slice(lastEnd + 1)
  if (!rest.some((record) => 'role' in record && record.role !== 'system')) {
    throw new AgentError('nothing_to_continue', 'the session has no unfinished task and no pending approval')
  }
  const answered = new Set<string>()
  let last: (typeof rest)[number] | undefined
  for (const record of rest) {
    if (!('role' in record)) continue
    if (record.role === 'tool') answered.add(record.toolCallId)
    if (record.role === 'assistant') last = record
  }
  if (last === undefined || !('role' in last) || last.role !== 'assistant') {
    return { kind: 'unfinished', dangling: [], responseId: undefined }
  }
  const dangling = toolCallsOf(last).filter((call) => !answered.has(call.id))
  return { kind: 'unfinished', dangling, responseId: last.responseId }
}

/**
 * Carries a paused or unfinished task on, inside one turn: records the decisions, runs each
 * approved call once and answers the denied ones (`denied by the user: <reason>`), or settles
 * the calls a dead process left: each runs again when its tool says `onResume: 'rerun'`, the
 * others get an `error` result. True when the user interrupted.
 */
export async function carryOn(rt: TaskRuntime, state: TaskState, plan: Continuation): Promise<boolean> {
  const { events } = rt
  let calls: ToolCallPart[]
  let responseId: string | undefined
  const decided = new Map<string, ToolOutcome>()
  const resumed = new Set<string>()
  if (plan.kind === 'approvals') {
    const decide = (entry: PendingCall) => plan.decisions.get(entry.toolCallId)!
    events.emit('turn_start', {})
    await recordDecisions(rt, plan.pending, decide)
    for (const entry of plan.pending) {
      const decision = decide(entry)
      if (!decision.approved) decided.set(entry.toolCallId, deniedOutcome(decision.reason))
    }
    calls = plan.pending.map((entry) => entry.call)
    responseId = plan.pending[0]?.responseId
  } else {
    if (plan.dangling.length === 0) return false
    events.emit('turn_start', {})
    calls = plan.dangling
    responseId = plan.responseId
    const rerun = await callsToRerun(rt, calls)
    for (const call of calls) {
      if (rerun.has(call.id)) resumed.add(call.id)
      else decided.set(call.id, errorOutcome(STOPPED_CALL_TEXT))
    }
  }
  const interrupted = await runCalls(rt, state, calls, responseId, rt.signal, decided, resumed)
  if (interrupted) events.emit('interrupt', {})
  events.emit('turn_end', {})
  return interrupted
}

/**
 * The calls a dead process left that run again: their tool says `onResume: 'rerun'`, and they
 * could have run (the user approved them, or they need no approval). A call whose tool needs an
 * approval the history does not hold never ran, and is answered like any other (`error`) rather
 * than run unasked.
 */
async function callsToRerun(rt: TaskRuntime, calls: readonly ToolCallPart[]): Promise<Set<string>> {
  const candidates = calls.filter((call) => rt.tools.byName.get(call.name)?.onResume === 'rerun')
  if (candidates.length === 0) return new Set()
  const approved = new Set<string>()
  for (const record of rt.journal.history) {
    if (!('role' in record) && record.type === 'approval_decision' && record.approved) {
      approved.add(record.toolCallId)
    }
  }
  const asking = await callsNeedingApproval(
    rt,
    candidates.filter((call) => !approved.has(call.id)),
  )
  return new Set(candidates.filter((call) => !asking.has(call.id)).map((call) => call.id))
}

/**
 * Before a new user message: calls still awaiting approval are denied (the user moved on), so the
 * history stays valid input and none of them ever runs.
 */
export async function denySuperseded(rt: TaskRuntime, state: TaskState): Promise<void> {
  const pending = pendingCalls(rt.journal.history)
  if (pending.length === 0) return
  await recordDecisions(rt, pending, (entry) => ({
    toolCallId: entry.toolCallId,
    approved: false,
    reason: SUPERSEDED_REASON,
  }))
  const decided = new Map(pending.map((entry) => [entry.toolCallId, deniedOutcome(SUPERSEDED_REASON)]))
  const calls = pending.map((entry) => entry.call)
  // Nothing runs (every call has its outcome), so no signal of the task's can cut these results.
  await runCalls(rt, state, calls, pending[0]?.responseId, new AbortController().signal, decided)
}
