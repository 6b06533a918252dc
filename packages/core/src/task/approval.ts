import type {
  ApprovalDecisionRecord,
  ApprovalRequestRecord,
  HistoryEvent,
  SubAgentCall,
  ToolCallPart,
} from '@kode/protocol'
import { approvalResponseId, sessionCallKey } from '@kode/protocol/helpers'
import { AgentError } from '../errors.js'
import type { PendingApproval } from '../outcome.js'
import { thrownText } from '../thrown-text.js'
import { neverAsks } from '../tools/define-tool.js'
import { errorOutcome, type ToolOutcome } from '../tools/tool-outcome.js'
import type { ToolSet } from '../tools/tool-set.js'
import type { TaskRuntime } from './runtime.js'

/** The user's decision on one pending call, as `agent.continue` takes it. */
export interface ApprovalDecision {
  toolCallId: string
  approved: boolean
  /** Why; a denied call's result tells the model `denied by the user: <reason>`. */
  reason?: string | undefined
  /**
   * The session the call waits in, as its `PendingApproval.sessionId` says (a sub-agent's; the
   * agent's own session, or none, for its own calls). Needed only when two pending calls share a
   * `toolCallId`, as the calls of two sub-agents whose models number their calls alike can.
   */
  sessionId?: string | undefined
}

/**
 * Copies the decisions `continue` was given, as they are now: the task checks them once it holds
 * the session's writer, and a host may reuse its list (and decision objects) by then. A list or a
 * decision that cannot be read (a getter that throws) becomes one `UnreadableDecision`, which
 * `checkDecisions` refuses as any decision of the wrong shape: through the run, not at the call.
 */
export function takeDecisions(approvals: readonly unknown[]): unknown[] {
  try {
    return approvals.map((decision: unknown) =>
      decision !== null && typeof decision === 'object' ? { ...decision } : decision,
    )
  } catch (error) {
    return [new UnreadableDecision(error)]
  }
}

/** What `takeDecisions` keeps of decisions it could not read: why. */
class UnreadableDecision {
  constructor(readonly cause: unknown) {}
}

/** The reason recorded for calls a new user message leaves undecided. */
export const SUPERSEDED_REASON = 'the user sent a new message instead'

/** The reason of the denials a sub-agent's paused calls get when the user interrupts its parent's task. */
export const INTERRUPTED_REASON = 'the user interrupted the task before deciding'

/** The same, when the parent's task failed. */
export const FAILED_REASON = 'the task failed before the user decided'

/** The same, when the parent's call that ran the sub-agent ran out of time. */
export const TIMED_OUT_REASON = 'the tool call that ran this sub-agent timed out before the user decided'

/**
 * Splits a response's calls into those that run now and those that wait for approval, asking the
 * `tools` the calls then run with (see `ToolBatch.tools`). Only a call that could run asks: an
 * unknown tool or invalid arguments are answered as errors at once.
 */
export async function callsNeedingApproval(
  rt: TaskRuntime,
  calls: readonly ToolCallPart[],
  tools: ToolSet,
): Promise<Set<string>> {
  const waiting = new Set<string>()
  for (const call of calls) {
    const tool = tools.byName.get(call.name)
    if (!tool || call.incomplete || tool.needsApproval === neverAsks) continue
    const parsed = tool.parseArguments(call.argumentsJson)
    if (!parsed.ok) continue
    const ctx = { toolCallId: call.id, toolName: call.name, sessionId: rt.sessionId, signal: rt.signal }
    let asks: boolean
    try {
      const answer = await rt.aborts.unlessAborted(tool.needsApproval(parsed.args, ctx))
      // Interrupted while a check ran: the batch answers every call (`aborted`), none is asked.
      if (rt.signal.aborted) break
      asks = answer !== false
    } catch {
      // A check that failed never lets a call through.
      asks = true
    }
    if (asks) waiting.add(call.id)
  }
  return waiting
}

/** The `approval_request` records of the calls that wait for a decision. */
export function approvalRequests(
  rt: TaskRuntime,
  calls: readonly ToolCallPart[],
  responseId: string | undefined,
): ApprovalRequestRecord[] {
  const { createId, now } = rt.settings
  return calls.map((call) => ({
    type: 'approval_request',
    id: createId(),
    createdAt: now(),
    toolCallId: call.id,
    toolName: call.name,
    arguments: call.argumentsJson,
    ...(responseId !== undefined ? { responseId } : {}),
  }))
}

/** Emits `tool_approval_request` for each call that waits, once its record is written. */
export function announceApprovals(
  rt: TaskRuntime,
  calls: readonly ToolCallPart[],
  responseId: string | undefined,
): void {
  for (const call of calls) {
    rt.events.emit('tool_approval_request', {
      responseId,
      toolCallId: call.id,
      toolName: call.name,
      arguments: call.argumentsJson,
    })
  }
}

/**
 * Records, in the parent's history, the calls a sub-agent paused for (`pending`, as the
 * sub-agent's history lists them): each with the session it waits in, the parent's call that ran
 * the sub-agent, and the response id the sub-agent's `tool_approval_request` carried, so the
 * parent's history alone says what its task awaits and its replay shows the request as it was.
 * No event: the sub-agent emitted `tool_approval_request` with its session id.
 */
export async function recordSubAgentApprovals(
  rt: TaskRuntime,
  subAgentCall: SubAgentCall,
  pending: readonly PendingCall[],
  responseId: string | undefined,
): Promise<void> {
  const { createId, now } = rt.settings
  // One append, as a response's own requests are (see `approvalRequests`).
  await rt.journal.persistAll(
    pending.map((entry): ApprovalRequestRecord => {
      const subAgentResponseId = approvalResponseId(entry)
      return {
        type: 'approval_request',
        id: createId(),
        createdAt: now(),
        toolCallId: entry.toolCallId,
        toolName: entry.toolName,
        arguments: entry.arguments,
        ...(responseId !== undefined ? { responseId } : {}),
        sessionId: entry.sessionId ?? subAgentCall.sessionId,
        subAgentCall,
        ...(subAgentResponseId !== undefined ? { subAgentResponseId } : {}),
      }
    }),
  )
}

/**
 * A pending call with what the engine needs to carry it on: the part to run (for a sub-agent's
 * call, the parent's call that ran the sub-agent) and its response id.
 */
export interface PendingCall extends PendingApproval {
  call: ToolCallPart
  responseId: string | undefined
  /** For a sub-agent's call: the parent's call that continues the sub-agent. */
  subAgentCall?: SubAgentCall
  /** For a sub-agent's call: the sub-agent's response that asked for it, when recorded. */
  subAgentResponseId?: string
}

/**
 * The calls of a history that await a decision: an `approval_request` with neither an
 * `approval_decision` nor a tool result after it (for a sub-agent's call, a result of the
 * parent's call that ran the sub-agent).
 */
export function pendingCalls(history: readonly HistoryEvent[]): PendingCall[] {
  const parts = new Map<string, ToolCallPart>()
  // By session and call id: two sub-agents' calls may share an id.
  const pending = new Map<string, PendingCall>()
  for (const record of history) {
    if ('role' in record) {
      if (record.role === 'assistant') {
        for (const part of record.parts) if (part.type === 'tool_call') parts.set(part.id, part)
      } else if (record.role === 'tool') {
        pending.delete(sessionCallKey(undefined, record.toolCallId))
        for (const [key, entry] of pending)
          if (entry.subAgentCall?.toolCallId === record.toolCallId) pending.delete(key)
      }
      continue
    }
    if (record.type === 'approval_request') {
      const { subAgentCall } = record
      const callId = subAgentCall?.toolCallId ?? record.toolCallId
      const call = parts.get(callId) ?? {
        type: 'tool_call',
        id: record.toolCallId,
        name: record.toolName,
        argumentsJson: record.arguments,
      }
      const entry: PendingCall = {
        toolCallId: record.toolCallId,
        toolName: record.toolName,
        arguments: record.arguments,
        call,
        responseId: record.responseId,
      }
      if (record.sessionId !== undefined) entry.sessionId = record.sessionId
      if (subAgentCall !== undefined) entry.subAgentCall = subAgentCall
      if (record.subAgentResponseId !== undefined) entry.subAgentResponseId = record.subAgentResponseId
      pending.set(sessionCallKey(record.sessionId, record.toolCallId), entry)
    } else if (record.type === 'approval_decision') {
      pending.delete(sessionCallKey(record.sessionId, record.toolCallId))
    }
  }
  return [...pending.values()]
}

/**
 * The key of a pending call: its id and the session it waits in (`undefined` for the history's
 * own calls; a sub-agent's records carry its session id), see `sessionCallKey`.
 */
export function pendingKey(entry: PendingApproval): string {
  return sessionCallKey(entry.sessionId, entry.toolCallId)
}

/** The public view of pending calls. */
export function publicPending(pending: readonly PendingCall[]): PendingApproval[] {
  return pending.map(({ toolCallId, toolName, arguments: args, sessionId }) =>
    sessionId === undefined
      ? { toolCallId, toolName, arguments: args }
      : { toolCallId, toolName, arguments: args, sessionId },
  )
}

/**
 * The calls of a session's history that await the user's decision, listed as
 * `TaskOutcome.pendingApprovals` lists them (a sub-agent's call with the child's `sessionId`):
 * what `agent.continue({ approvals })` needs one decision each for. A host that resumes a
 * session, such as a restarted process or a reloaded page, asks about these before it sends a
 * new message, which would deny them. Empty when nothing waits.
 */
export function pendingApprovals(history: readonly HistoryEvent[]): PendingApproval[] {
  return publicPending(pendingCalls(history))
}

/**
 * Checks `approvals` against what is pending and matches each to its call, by `pendingKey`;
 * throws `AgentError`: a decision without a call id, a boolean `approved`, a text `reason` or a
 * text `sessionId` (`invalid_options`), one whose call id waits in more than one session without
 * a `sessionId` to tell which (`invalid_options`), a call decided twice (in this list, or already
 * decided in the history), an id that awaits nothing, or a pending call left out. `sessionId` is
 * the history's own session: a decision naming it is one on the history's own calls.
 */
export function checkDecisions(
  history: readonly HistoryEvent[],
  pending: readonly PendingCall[],
  approvals: readonly ApprovalDecision[],
  sessionId: string,
): Map<string, ApprovalDecision> {
  const open = new Map(pending.map((entry) => [pendingKey(entry), entry]))
  const requested = new Set<string>()
  for (const record of history)
    if (!('role' in record) && record.type === 'approval_request')
      requested.add(sessionCallKey(record.sessionId, record.toolCallId))
  const decisions = new Map<string, ApprovalDecision>()
  for (const approval of approvals) {
    if (approval instanceof UnreadableDecision) {
      throw new AgentError('invalid_options', `a decision could not be read: ${thrownText(approval.cause)}`, {
        cause: approval.cause,
      })
    }
    const id = approval?.toolCallId
    if (typeof id !== 'string' || typeof approval.approved !== 'boolean') {
      throw new AgentError('invalid_options', 'each approval needs a toolCallId and approved: true or false')
    }
    // The reason is recorded: anything but text would fail the store once the task had begun.
    if (approval.reason !== undefined && typeof approval.reason !== 'string') {
      throw new AgentError('invalid_options', `the reason of the decision on ${id} must be a string`)
    }
    const named = approval.sessionId
    if (named !== undefined && typeof named !== 'string') {
      throw new AgentError('invalid_options', `the sessionId of the decision on ${id} must be a string`)
    }
    let key: string
    if (named !== undefined) key = sessionCallKey(named === sessionId ? undefined : named, id)
    else {
      const waiting = pending.filter((entry) => entry.toolCallId === id)
      if (waiting.length > 1) {
        const sessions = waiting.map((entry) => entry.sessionId ?? sessionId).join(', ')
        throw new AgentError(
          'invalid_options',
          `tool call ${id} waits in more than one session (${sessions}): the decision needs its sessionId`,
        )
      }
      key = waiting[0] ? pendingKey(waiting[0]) : sessionCallKey(undefined, id)
      // Not pending: was it asked (and decided) in any session?
      if (!waiting[0]) {
        for (const record of history)
          if (!('role' in record) && record.type === 'approval_request' && record.toolCallId === id)
            key = sessionCallKey(record.sessionId, id)
      }
    }
    // A decision that names its session is told about that session's call only.
    const where = named === undefined ? '' : ` in session ${named}`
    if (decisions.has(key) || (requested.has(key) && !open.has(key))) {
      throw new AgentError('approval_already_decided', `tool call ${id}${where} was already decided`)
    }
    if (!open.has(key)) throw new AgentError('unknown_approval', `tool call ${id} awaits no approval${where}`)
    // A copy: what was checked is what is recorded, whatever the caller's objects become.
    const { approved, reason } = approval
    decisions.set(key, { toolCallId: id, approved, ...(reason !== undefined ? { reason } : {}) })
  }
  // A call whose id waits in more than one session is named with its session, for the host to
  // tell which one it left out.
  const counts = new Map<string, number>()
  for (const entry of pending) counts.set(entry.toolCallId, (counts.get(entry.toolCallId) ?? 0) + 1)
  const missing = [...open]
    .filter(([key]) => !decisions.has(key))
    .map(([, entry]) =>
      (counts.get(entry.toolCallId) ?? 0) > 1
        ? `${entry.toolCallId} (in session ${entry.sessionId ?? sessionId})`
        : entry.toolCallId,
    )
  if (missing.length > 0) {
    throw new AgentError('approvals_missing', `no decision for the tool calls ${missing.join(', ')}`)
  }
  return decisions
}

/**
 * What made a decision, as its record says (`ApprovalDecisionRecord.decidedBy`): a reader tells the
 * denials a new message made by this, which the host cannot choose, rather than by their reason.
 */
export type DecidedBy = 'continue' | 'new_message'

/**
 * Whether an `approval_decision` record is a denial a new user message made (it begins a new task).
 * Histories written before `decidedBy` was recorded say so by the reason alone.
 */
export function deniedByNewMessage(record: ApprovalDecisionRecord): boolean {
  if (record.decidedBy !== undefined) return record.decidedBy === 'new_message'
  return !record.approved && record.reason === SUPERSEDED_REASON
}

/**
 * Persists the decisions (`approval_decision`, in one append) and emits `tool_approval_decision`. A
 * sub-agent's call is announced by the sub-agent as it carries on (or is settled).
 */
export async function recordDecisions(
  rt: TaskRuntime,
  pending: readonly PendingCall[],
  decide: (call: PendingCall) => ApprovalDecision,
  decidedBy: DecidedBy,
): Promise<void> {
  const { createId, now } = rt.settings
  const decided = pending.map((entry) => ({ entry, ...decide(entry) }))
  // One append, as a response's requests are: a crash keeps every decision or none, so a call is
  // never left decided while the others it was decided with are asked again.
  await rt.journal.persistAll(
    decided.map(({ entry, approved, reason }): ApprovalDecisionRecord => {
      const { sessionId } = entry
      return {
        type: 'approval_decision',
        id: createId(),
        createdAt: now(),
        toolCallId: entry.toolCallId,
        toolName: entry.toolName,
        approved,
        ...(reason !== undefined ? { reason } : {}),
        ...(sessionId !== undefined ? { sessionId } : {}),
        decidedBy,
      }
    }),
  )
  for (const { entry, approved, reason } of decided) {
    if (entry.sessionId !== undefined) continue
    rt.events.emit('tool_approval_decision', {
      responseId: entry.responseId,
      toolCallId: entry.toolCallId,
      toolName: entry.toolName,
      approved,
      ...(reason !== undefined ? { reason } : {}),
    })
  }
}

/** The `error` result a denied call gets: what the model reads. */
export function deniedOutcome(reason: string | undefined): ToolOutcome {
  return errorOutcome(reason ? `denied by the user: ${reason}` : 'denied by the user')
}
