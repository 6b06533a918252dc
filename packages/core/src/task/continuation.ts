import { type HistoryEvent, type ToolCallPart, toolCallsOf } from '@kode/protocol'
import { sessionCallKey } from '@kode/protocol/helpers'
import { SessionError, type SessionInfo, type SessionLease, type SessionStore } from '@kode/session'
import { AgentError } from '../errors.js'
import type { TaskOutcome } from '../outcome.js'
import { errorOutcome, type ToolOutcome } from '../tools/tool-outcome.js'
import type { ToolSet } from '../tools/tool-set.js'
import {
  type ApprovalDecision,
  callsNeedingApproval,
  checkDecisions,
  deniedOutcome,
  type PendingCall,
  pendingCalls,
  pendingKey,
  recordDecisions,
  SUPERSEDED_REASON,
} from './approval.js'
import { type ChildResume, withSessionLinks } from './call-sub-agents.js'
import type { TaskRuntime } from './runtime.js'
import type { SubAgentReads } from './sub-agent-reads.js'
import { type CallsEnd, runCalls, type TaskState } from './turn.js'

/** The result of a call whose sub-agent waited for approval when the user sent a new message. */
export const SUPERSEDED_SUB_AGENT_TEXT =
  "The sub-agent's tool calls were waiting for the user's approval; the user sent a new message instead."

/** What a sub-agent whose parent got a new message instead of decisions ends saying. */
export const SUPERSEDED_CHILD_TEXT =
  "The user sent the parent agent a new message instead of deciding: this sub-agent's calls waiting for approval never ran."

/** The text of a call a task left unanswered when its process stopped. */
export const STOPPED_CALL_TEXT =
  'The task stopped before this tool call finished (its process ended); it may or may not have run.'

/** Why a sub-agent settled after its process died ends: the call that ran it was answered without it. */
export const STOPPED_SUB_AGENT_TEXT =
  "The task stopped (its process ended); the parent's call that ran it was answered without it."

/** What `agent.continue` carries on, decided from the history before the task starts. */
export type Continuation =
  /**
   * Calls awaited approval: the decisions, checked. `stopped`: the other calls of that response a
   * dead process left without a result (it died while they ran), settled as for `unfinished`.
   */
  | {
      kind: 'approvals'
      pending: PendingCall[]
      /** By `pendingKey`. */
      decisions: Map<string, ApprovalDecision>
      stopped: ToolCallPart[]
      /** The paused task's process died: its turn is still open (no `task_metadata` ended it). */
      died: boolean
    }
  /** A task that never finished (its process died): the calls it left without a result. */
  | { kind: 'unfinished'; dangling: ToolCallPart[]; responseId: string | undefined }

/**
 * Reads what `continue` can do with the history; throws `AgentError` for decisions that do not
 * fit what is pending (see `checkDecisions`) and `nothing_to_continue` for a finished session.
 */
export function planContinuation(
  history: readonly HistoryEvent[],
  approvals: readonly ApprovalDecision[] | undefined,
  sessionId: string,
): Continuation {
  if (approvals !== undefined && !Array.isArray(approvals)) {
    throw new AgentError('invalid_options', 'approvals must be a list of decisions')
  }
  const pending = pendingCalls(history)
  if (pending.length > 0 || (approvals !== undefined && approvals.length > 0)) {
    const decisions = checkDecisions(history, pending, approvals ?? [], sessionId)
    // A process that died while the response's other calls ran left them without a result too.
    const waiting = new Set(pending.map((entry) => entry.call.id))
    const unfinished = unfinishedTask(history)
    const stopped = (unfinished?.dangling ?? []).filter((call) => !waiting.has(call.id))
    return { kind: 'approvals', pending, decisions, stopped, died: unfinished !== undefined }
  }
  const unfinished = unfinishedTask(history)
  if (unfinished === undefined) {
    throw new AgentError('nothing_to_continue', 'the session has no unfinished task and no pending approval')
  }
  return unfinished
}

/**
 * The task the history leaves unfinished (its process died before its `task_metadata`), with the
 * calls its last response made that have no result; undefined when the last task finished. A
 * `continue` that died after recording its decisions left one too, though its response came
 * before the paused task's `task_metadata`: the calls it decided have no result.
 */
function unfinishedTask(
  history: readonly HistoryEvent[],
): (Continuation & { kind: 'unfinished' }) | undefined {
  const lastEnd = history.findLastIndex((record) => !('role' in record) && record.type === 'task_metadata')
  const began = (record: HistoryEvent) =>
    'role' in record ? record.role !== 'system' : record.type === 'approval_decision'
  if (!history.slice(lastEnd + 1).some(began)) return undefined
  // The calls of the last response, unless a message came after it (the calls before a message
  // were answered, or are out of the provider's reach).
  const at = history.findLastIndex(
    (record) => 'role' in record && record.role !== 'system' && record.role !== 'tool',
  )
  const last = history[at]
  if (last === undefined || !('role' in last) || last.role !== 'assistant') {
    return { kind: 'unfinished', dangling: [], responseId: undefined }
  }
  // Only results after the last response answer its calls (an earlier turn's call may have had the
  // same id: some providers' ids repeat from response to response). A call whose approval is still
  // to be decided is pending, not dangling: the request names it (a sub-agent's names the call here
  // that ran the sub-agent).
  const answered = new Set<string>()
  // By `sessionCallKey`: two sub-agents' calls may share an id.
  const waiting = new Map<string, string>()
  for (const record of history.slice(at + 1)) {
    if ('role' in record) {
      if (record.role === 'tool') answered.add(record.toolCallId)
    } else if (record.type === 'approval_request') {
      const key = sessionCallKey(record.sessionId, record.toolCallId)
      waiting.set(key, record.subAgentCall?.toolCallId ?? record.toolCallId)
    } else if (record.type === 'approval_decision') {
      waiting.delete(sessionCallKey(record.sessionId, record.toolCallId))
    }
  }
  const held = new Set(waiting.values())
  const dangling = toolCallsOf(last).filter((call) => !answered.has(call.id) && !held.has(call.id))
  return { kind: 'unfinished', dangling, responseId: last.responseId }
}

/**
 * Carries a paused or unfinished task on, inside one turn: records the decisions, runs each
 * approved call once and answers the denied ones (`denied by the user: <reason>`), runs again
 * each call whose sub-agent waited (its decisions go to the sub-agent, which carries on), and
 * settles the calls a dead process left (with or without pending approvals): each runs again when its tool says `onResume: 'rerun'`
 * (unless `rerunAllowed` is false: the user sent a new message instead), the others get an `error`
 * result. Says whether the user interrupted, or a sub-agent paused again. A call whose sub-agent
 * waited is not announced again: it was running when the task paused, and the replay shows its
 * `tool_call` there.
 *
 * Settling a dead process's calls continues the turn it left open, as the session's replay shows
 * it: no `turn_start` and no second `tool_call` for those calls (its live events, and the replay a
 * watcher derives from its records, had both), only the results and the `turn_end`. So the events
 * of the dead task, then of this one, are the replay of the history they leave.
 */
export async function carryOn(
  rt: TaskRuntime,
  state: TaskState,
  plan: Continuation,
  rerunAllowed = true,
): Promise<CallsEnd> {
  const { events } = rt
  // The calls are checked (`needsApproval` of a rerun) and run with one set of tools, whatever
  // `setTools` does meanwhile.
  const tools = rt.tools
  let calls: ToolCallPart[]
  let responseId: string | undefined
  const decided = new Map<string, ToolOutcome>()
  const resumed = new Set<string>()
  const resume = new Map<string, ChildResume[]>()
  let announced: Set<string> | undefined
  if (plan.kind === 'approvals') {
    const decide = (entry: PendingCall) => plan.decisions.get(pendingKey(entry))!
    calls = uniqueCalls(plan.pending)
    responseId = plan.pending[0]?.responseId
    announced = runningCalls(plan.pending)
    if (plan.stopped.length > 0) {
      // The dead process announced them; they run again or are answered as in the branch below.
      const rerun = await callsToRerun(rt, plan.stopped, tools)
      for (const call of plan.stopped) {
        announced.add(call.id)
        if (rerun.has(call.id)) resumed.add(call.id)
        else decided.set(call.id, errorOutcome(STOPPED_CALL_TEXT))
      }
      calls = [...calls, ...plan.stopped]
    }
    // A task that paused ended its turn; one whose process died left it open, and goes on with it.
    if (plan.died) {
      const open = announced
      events.resumeTurn(calls.filter((call) => open.has(call.id)).map((call) => callFields(call, responseId)))
    } else events.emit('turn_start', {})
    await recordDecisions(rt, plan.pending, decide, 'continue')
    for (const entry of plan.pending) {
      const decision = decide(entry)
      const via = entry.subAgentCall
      // Named by the session it waits in, where the sub-agent (or its own sub-agent) finds it.
      if (via) routeDecision(resume, via, entry, { ...decision, sessionId: entry.sessionId })
      else if (!decision.approved) decided.set(entry.toolCallId, deniedOutcome(decision.reason))
    }
  } else {
    if (plan.dangling.length === 0) return 'done'
    // The turn the dead process opened goes on: its `turn_start` and the calls' `tool_call` are
    // out already (and in the session's replay), so only the results and `turn_end` follow.
    announced = new Set(plan.dangling.map((call) => call.id))
    calls = plan.dangling
    responseId = plan.responseId
    events.resumeTurn(calls.map((call) => callFields(call, responseId)))
    const rerun = rerunAllowed ? await callsToRerun(rt, calls, tools) : new Set<string>()
    for (const call of calls) {
      if (rerun.has(call.id)) resumed.add(call.id)
      else decided.set(call.id, errorOutcome(STOPPED_CALL_TEXT))
    }
  }
  // A stopped call leaves the sub-agents it ran as their process left them: they are settled
  // first, as a call's sub-agents end before its result (one that runs again starts new ones).
  const unseen = await settleStoppedSubAgents(rt, state, [...decided.keys(), ...resumed])
  linkUnseen(decided, unseen)
  // When nothing runs (every call has its outcome), no signal of the task's can cut the results.
  const signal = rerunAllowed ? rt.signal : new AbortController().signal
  // A call that runs again and is stopped before its tool is called again still may or may not
  // have run in the dead process: read as "interrupted before it ran", the model would redo it.
  const notRun = new Map([...resumed].map((id) => [id, errorOutcome(STOPPED_CALL_TEXT)]))
  const end = await runCalls(rt, state, calls, responseId, signal, {
    decided,
    resume,
    resumed,
    notRun,
    tools,
    ...(announced ? { announced } : {}),
  })
  if (end === 'interrupted') events.emit('interrupt', {})
  events.emit('turn_end', {})
  return end
}

/** The fields of a call's `tool_call` event. */
function callFields(call: ToolCallPart, responseId: string | undefined) {
  return { responseId, toolCallId: call.id, toolName: call.name, arguments: call.argumentsJson }
}

/**
 * Adds a decision on `entry` to what the sub-agent `via` names (run by its call) carries on with,
 * with the request it answers.
 */
function routeDecision(
  resume: Map<string, ChildResume[]>,
  via: { toolCallId: string; sessionId: string },
  entry: PendingCall,
  decision: ApprovalDecision,
): void {
  const list = resume.get(via.toolCallId) ?? []
  let child = list.find((resumed) => resumed.sessionId === via.sessionId)
  if (!child) {
    child = { sessionId: via.sessionId, approvals: [], requests: [] }
    list.push(child)
  }
  child.approvals.push(decision)
  child.requests.push(entry)
  resume.set(via.toolCallId, list)
}

/** The calls to run for pending entries, once each (a sub-agent's calls share their parent's call). */
function uniqueCalls(pending: readonly PendingCall[]): ToolCallPart[] {
  const calls = new Map<string, ToolCallPart>()
  for (const entry of pending) if (!calls.has(entry.call.id)) calls.set(entry.call.id, entry.call)
  return [...calls.values()]
}

/**
 * The calls that ran the sub-agents waiting among `pending`: they were running (and announced)
 * when their sub-agent paused, and the session's replay shows them, so carrying them on does not
 * announce them again.
 */
function runningCalls(pending: readonly PendingCall[]): Set<string> {
  return new Set(pending.filter((entry) => entry.subAgentCall).map((entry) => entry.call.id))
}

/**
 * The calls a dead process left that run again: their tool says `onResume: 'rerun'`, and they
 * could have run (the user approved them, or they need no approval). A call whose tool needs an
 * approval the history does not hold never ran, and is answered like any other (`error`) rather
 * than run unasked.
 */
async function callsToRerun(
  rt: TaskRuntime,
  calls: readonly ToolCallPart[],
  tools: ToolSet,
): Promise<Set<string>> {
  const candidates = calls.filter((call) => tools.byName.get(call.name)?.onResume === 'rerun')
  if (candidates.length === 0) return new Set()
  // Only decisions after the last response approve its calls: an earlier call may have had the
  // same id (some providers' ids repeat from response to response).
  let approved = new Set<string>()
  for (const record of rt.journal.history) {
    if ('role' in record) {
      if (record.role === 'assistant') approved = new Set()
    } else if (record.type === 'approval_decision' && record.approved && record.sessionId === undefined) {
      // A sub-agent's call (`sessionId`) is not one of these, whatever its id.
      approved.add(record.toolCallId)
    }
  }
  const asking = await callsNeedingApproval(
    rt,
    candidates.filter((call) => !approved.has(call.id)),
    tools,
  )
  // Interrupted while a check ran: the calls not checked yet were not let through.
  if (rt.signal.aborted) return new Set()
  return new Set(candidates.filter((call) => !asking.has(call.id)).map((call) => call.id))
}

/**
 * Before a new user message: calls still awaiting approval are denied (the user moved on), so the
 * history stays valid input and none of them ever runs. A call whose sub-agent waited gets an
 * `error` result, and the sub-agent is carried on with the denials and nothing run, before that
 * result (which links it): its session records and announces them, and its task ends `error`
 * (`SUPERSEDED_CHILD_TEXT`), so it keeps no call that could never be answered. The decisions and results
 * come in a turn of their own, before the message's; when the process died while the response's
 * other calls ran, in the turn it left open, where those calls are answered too (as `continue`
 * would settle them, none running again).
 */
export async function denySuperseded(rt: TaskRuntime, state: TaskState): Promise<void> {
  const pending = pendingCalls(rt.journal.history)
  if (pending.length === 0) return
  const decided = new Map<string, ToolOutcome>()
  const resume = new Map<string, ChildResume[]>()
  const denial = (entry: PendingCall): ApprovalDecision => ({
    toolCallId: entry.toolCallId,
    approved: false,
    reason: SUPERSEDED_REASON,
  })
  for (const entry of pending) {
    const via = entry.subAgentCall
    if (via) {
      decided.set(entry.call.id, errorOutcome(SUPERSEDED_SUB_AGENT_TEXT))
      routeDecision(resume, via, entry, { ...denial(entry), sessionId: entry.sessionId })
    } else decided.set(entry.call.id, deniedOutcome(SUPERSEDED_REASON))
  }
  const announced = runningCalls(pending)
  let calls = uniqueCalls(pending)
  const responseId = pending[0]?.responseId
  const unfinished = unfinishedTask(rt.journal.history)
  if (unfinished) {
    const waiting = new Set(calls.map((call) => call.id))
    const stopped = unfinished.dangling.filter((call) => !waiting.has(call.id))
    for (const call of stopped) {
      announced.add(call.id)
      decided.set(call.id, errorOutcome(STOPPED_CALL_TEXT))
    }
    calls = [...calls, ...stopped]
    const unseen = await settleStoppedSubAgents(
      rt,
      state,
      stopped.map((call) => call.id),
    )
    linkUnseen(decided, unseen)
    rt.events.resumeTurn(
      calls.filter((call) => announced.has(call.id)).map((call) => callFields(call, responseId)),
    )
  } else {
    // In a turn of their own, as `continue` answers decided calls (and as the replay shows them).
    rt.events.emit('turn_start', {})
  }
  // The sub-agents' decisions are announced by the sub-agents, as they record them.
  await recordDecisions(rt, pending, denial, 'new_message')
  // Nothing runs (every call has its outcome), so no signal of the task's can cut these results.
  const signal = new AbortController().signal
  await runCalls(rt, state, calls, responseId, signal, {
    decided,
    announced,
    resume,
    notCarriedOn: SUPERSEDED_CHILD_TEXT,
  })
  rt.events.emit('turn_end', {})
}

/**
 * Before a new user message: the calls a dead process left without a result get an `error` result
 * (`STOPPED_CALL_TEXT`) and their open turn ends, as `continue` would settle them, but none runs
 * again (the user moved on). So the history stays valid input and the model sees what happened.
 */
export async function settleStopped(rt: TaskRuntime, state: TaskState): Promise<void> {
  const unfinished = unfinishedTask(rt.journal.history)
  if (unfinished === undefined || unfinished.dangling.length === 0) return
  await carryOn(rt, state, unfinished, false)
}

/**
 * Settles the sub-agents that calls `callIds` ran before their process died: those the calls
 * carried on (the user's decisions went to them, as the history records) and those they started
 * that never paused (the history has no record of them; the store links their sessions to this
 * one and to the call). Each settles what its process left (its calls without a result get the
 * `STOPPED_CALL_TEXT` error, none runs again) and its task ends `error`, so its session leaves no
 * call unanswered; its accounting is the parent task's, as any sub-agent's it ran. A sub-agent
 * session the store does not have, or whose task ended, is left alone.
 */
async function settleStoppedSubAgents(
  rt: TaskRuntime,
  state: TaskState,
  callIds: readonly string[],
): Promise<UnseenChildren> {
  const unseen: UnseenChildren = new Map()
  if (callIds.length === 0) return unseen
  // What the check before the task listed and read, taken from `subAgentReads`.
  const { store, subAgentReads: reads } = rt
  const listed = await reads.takeList(store, rt.sessionId)
  const { children, carried } = stoppedSubAgents(rt.sessionId, rt.journal.history, callIds, listed)
  for (const [sessionId, toolCallId] of children) {
    const info = await store.info(sessionId)
    if (info === undefined) continue
    let settled: TaskOutcome | undefined
    // Its task may have ended before the process died (only the parent's result was lost).
    if (unfinishedTask(await reads.takeHistory(store, sessionId)) !== undefined) {
      const parent = { rt, toolCallId, signal: new AbortController().signal }
      const spec = { name: info.subAgent?.name ?? 'sub_agent' }
      settled = (await rt.runSubAgent(parent, spec, [], { sessionId, approvals: [], settleOnly: true }))
        .outcome
      state.accounting.addSubAgent(settled.metadata)
    }
    // Replay finds a carried one through the approval records; the others only through a link.
    if (carried.has(sessionId)) continue
    const list = unseen.get(toolCallId) ?? []
    list.push({ sessionId, metadata: settled?.metadata })
    unseen.set(toolCallId, list)
  }
  return unseen
}

/**
 * The sub-agent sessions calls `callIds` of session `sessionId` ran, by session id (the call that
 * ran each): those the calls carried on (the user's decisions went to them, as `history` records,
 * in the order they were decided: `carried`), then those the store links to the calls (`listed`:
 * what the store lists for `sessionId` as parent).
 */
function stoppedSubAgents(
  sessionId: string,
  history: readonly HistoryEvent[],
  callIds: readonly string[],
  listed: readonly SessionInfo[],
): { children: Map<string, string>; carried: Set<string> } {
  const wanted = new Set(callIds)
  const at = history.findLastIndex((record) => 'role' in record && record.role === 'assistant')
  const requested = new Map<string, { toolCallId: string; sessionId: string }>()
  const children = new Map<string, string>()
  for (const record of history.slice(at + 1)) {
    if ('role' in record) continue
    if (
      record.type === 'approval_request' &&
      record.subAgentCall &&
      wanted.has(record.subAgentCall.toolCallId)
    ) {
      requested.set(sessionCallKey(record.sessionId, record.toolCallId), record.subAgentCall)
    } else if (record.type === 'approval_decision') {
      const via = requested.get(sessionCallKey(record.sessionId, record.toolCallId))
      if (via && !children.has(via.sessionId)) children.set(via.sessionId, via.toolCallId)
    }
  }
  const carried = new Set(children.keys())
  for (const [child, toolCallId] of startedSubAgents(sessionId, wanted, listed)) {
    if (!children.has(child)) children.set(child, toolCallId)
  }
  return { children, carried }
}

/**
 * Before a task starts on a history a dead process left: checks that the sub-agent sessions the
 * task will settle (those the dead calls ran, theirs in turn, and, when the process died after
 * deciding a sub-agent's calls, the sub-agents carried on) are free, by taking and giving back each
 * one's lease. The dead process took a sub-agent's lease after its parent's and renewed it on its
 * own timer, so it can outlive the parent's: the task would take the parent, start, and only then
 * fail on the sub-agent. It is refused with `session_locked` before it starts instead, and can be
 * asked again once that lease expired. Costs nothing when no task died.
 */
export async function checkStoppedSubAgentsFree(rt: TaskRuntime): Promise<void> {
  const history = rt.journal.history
  const unfinished = unfinishedTask(history)
  if (unfinished === undefined) return
  const carriedOn = pendingCalls(history).flatMap((entry) =>
    entry.subAgentCall ? [entry.subAgentCall.sessionId] : [],
  )
  for (const child of new Set(carriedOn)) await checkFree(rt.store, child)
  await checkChildrenFree(
    rt.store,
    rt.subAgentReads,
    rt.sessionId,
    history,
    unfinished.dangling.map((call) => call.id),
  )
}

/**
 * Checks the sub-agent sessions calls `callIds` of session `sessionId` ran, and theirs in turn, are
 * free; keeps what it lists and reads in `reads` for settling them.
 */
async function checkChildrenFree(
  store: SessionStore,
  reads: SubAgentReads,
  sessionId: string,
  history: readonly HistoryEvent[],
  callIds: readonly string[],
): Promise<void> {
  if (callIds.length === 0) return
  const listed = await reads.keepList(store, sessionId)
  const { children } = stoppedSubAgents(sessionId, history, callIds, listed)
  for (const child of children.keys()) {
    let childHistory: HistoryEvent[]
    try {
      childHistory = await reads.keepHistory(store, child)
    } catch (error) {
      if (SessionError.is(error) && error.code === 'session_not_found') continue
      throw error
    }
    const unfinished = unfinishedTask(childHistory)
    // A sub-agent whose task ended before its process died is left alone: no lease is needed.
    if (unfinished === undefined) continue
    await checkFree(store, child)
    await checkChildrenFree(
      store,
      reads,
      child,
      childHistory,
      unfinished.dangling.map((call) => call.id),
    )
  }
}

/** Takes the session's lease and gives it back: `session_locked` while another writer holds it. */
async function checkFree(store: SessionStore, sessionId: string): Promise<void> {
  let lease: SessionLease
  try {
    lease = await store.acquire(sessionId)
  } catch (error) {
    if (SessionError.is(error) && error.code === 'session_not_found') return
    throw error
  }
  await lease.release()
}

/**
 * The sub-agent sessions of stopped calls that their parent's history does not name (they never
 * paused), by call: each call's result links them, so a replay of the parent shows them.
 */
type UnseenChildren = Map<string, { sessionId: string; metadata: TaskOutcome['metadata'] | undefined }[]>

/** Links each decided call's result to the sub-agent sessions `unseen` lists for it. */
function linkUnseen(decided: Map<string, ToolOutcome>, unseen: UnseenChildren): void {
  for (const [toolCallId, children] of unseen) {
    const outcome = decided.get(toolCallId)
    if (outcome) decided.set(toolCallId, withSessionLinks(outcome, children))
  }
}

/**
 * The sub-agent sessions the store links to calls `callIds` of this session, by session id, in
 * the order they were created (a call's own order: a sub-agent that paused is found here too).
 * `listed`: what the store lists for this session as parent.
 */
function startedSubAgents(
  sessionId: string,
  callIds: ReadonlySet<string>,
  listed: readonly SessionInfo[],
): Map<string, string> {
  const started: { id: string; createdAt: number; toolCallId: string }[] = []
  // The filter is the store's to apply if it can; a store that ignores it lists every session.
  for (const info of listed) {
    const toolCallId = info.subAgent?.parentToolCallId
    if (info.parentSessionId !== sessionId || info.forkedFrom !== undefined) continue
    if (toolCallId !== undefined && callIds.has(toolCallId))
      started.push({ id: info.id, createdAt: info.createdAt, toolCallId })
  }
  started.sort((a, b) => a.createdAt - b.createdAt)
  return new Map(started.map((child) => [child.id, child.toolCallId]))
}
