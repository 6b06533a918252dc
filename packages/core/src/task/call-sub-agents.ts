import type { HistoryEvent, ToolResultUiExtra, UserContentPart } from '@kode/protocol'
import { AgentError } from '../errors.js'
import type { TaskOutcome } from '../outcome.js'
import type { CallSignal } from '../tools/call-signal.js'
import type { SubAgentOutcome, SubAgentSpec } from '../tools/sub-agent-spec.js'
import type { ToolOutcome } from '../tools/tool-outcome.js'
import {
  type ApprovalDecision,
  FAILED_REASON,
  INTERRUPTED_REASON,
  type PendingCall,
  TIMED_OUT_REASON,
} from './approval.js'
import type { TaskRuntime } from './runtime.js'

/** A sub-agent to carry on when the call that ran it runs again: its session and the decisions for it. */
export interface ChildResume {
  sessionId: string
  approvals: ApprovalDecision[]
  /** The requests `approvals` answer, in the same order (see `announceUnrecorded`). */
  requests: PendingCall[]
}

/** Why a paused sub-agent is settled when the parent's call that ran it ended without carrying it on. */
export const NOT_CARRIED_ON_TEXT =
  "The parent's call that ran this sub-agent ended without carrying it on: its calls waiting for approval never ran."

/**
 * Why a paused sub-agent's session was settled without carrying it on: the parent's call that ran
 * it ended (returned, threw or timed out) without calling `runSubAgent` for it again, or the user
 * sent the parent a new message instead of deciding.
 */
export class SubAgentNotCarriedOn extends Error {
  override readonly name = 'SubAgentNotCarriedOn'
  constructor(message = NOT_CARRIED_ON_TEXT, options?: ErrorOptions) {
    super(message, options)
  }
}

/** A sub-agent that paused for approval: its session and its pending calls. */
export interface PausedChild {
  sessionId: string
  pending: readonly PendingCall[]
}

/**
 * The sub-agents one batch of tool calls starts (`ToolContext.runSubAgent`), by call, in the
 * order they start: what links each call's result to its children, what the turn awaits before
 * it ends, and which calls are suspended because a child paused for approval.
 */
export class CallSubAgents {
  readonly #rt: TaskRuntime
  /** Every child of the batch, settled (`undefined` for one that failed to run) when it has ended. */
  readonly #all: Promise<TaskOutcome | undefined>[] = []
  readonly #byCall = new Map<string, Promise<TaskOutcome | undefined>[]>()
  readonly #resumes = new Map<string, ChildResume[]>()
  /** The children that ended `awaiting_approval`, by the call that ran them. */
  readonly paused = new Map<string, PausedChild[]>()
  /** Each call's signal, by call: whether it timed out. */
  readonly #signals = new Map<string, CallSignal>()
  /** Paused children settled because their call timed out: the timeout, which stops them too. */
  readonly #timedOut = new Map<ChildResume, unknown>()

  /** What a paused child the batch does not carry on ends saying (see `settleNotCarriedOn`). */
  readonly #notCarriedOn: string

  constructor(
    rt: TaskRuntime,
    resume: ReadonlyMap<string, readonly ChildResume[]> | undefined,
    notCarriedOn = NOT_CARRIED_ON_TEXT,
  ) {
    this.#rt = rt
    this.#notCarriedOn = notCarriedOn
    for (const [id, list] of resume ?? []) this.#resumes.set(id, [...list])
  }

  /** Whether the call started a sub-agent (it may still be suspended when it returns). */
  ran(toolCallId: string): boolean {
    return this.#byCall.has(toolCallId)
  }

  /**
   * Whether the call is suspended: a child it ran waits for approval, and the call did not time
   * out. One that timed out gets its timeout result, and its paused children are settled (see
   * `link`): a host that set a time limit gets the call back within it.
   */
  suspends(toolCallId: string): boolean {
    return this.paused.has(toolCallId) && this.#signals.get(toolCallId)?.timeout === undefined
  }

  /**
   * Starts a child for the call (or carries on the next one it paused). A call that has its
   * result already, or is about to get one without the tool (it returned, timed out, was
   * interrupted or stopped by a host failure), starts none: its result cannot link a child any
   * more, and one that ran anyway would run unseen by replay, so this rejects with an
   * `AgentError` (`tool_call_ended`) and nothing runs.
   */
  start(
    toolCallId: string,
    callSignal: CallSignal,
    spec: SubAgentSpec,
    input: string | readonly UserContentPart[],
  ): Promise<SubAgentOutcome> {
    if (callSignal.ended || callSignal.signal.aborted) {
      return Promise.reject(
        new AgentError(
          'tool_call_ended',
          `Tool call ${toolCallId} has ended: it cannot start the sub-agent ${spec.name} any more.`,
        ),
      )
    }
    // A child may outlive the tool's `execute` (a tool that did not wait for it): the user's
    // interrupt still reaches it once the call's own signal no longer follows the task's.
    this.#signals.set(toolCallId, callSignal)
    const signal = AbortSignal.any([callSignal.signal, this.#rt.signal])
    const parent = { rt: this.#rt, toolCallId, signal }
    const resume = this.#resumes.get(toolCallId)?.shift()
    const child = this.#rt.runSubAgent(parent, spec, input, resume).then(
      ({ outcome, pending }) => {
        if (outcome.reason === 'awaiting_approval') {
          const list = this.paused.get(toolCallId) ?? []
          list.push({ sessionId: outcome.sessionId, pending })
          this.paused.set(toolCallId, list)
        }
        return outcome
      },
      async (error: unknown) => {
        // Not carried on (its session is gone, a write failed): its decisions are the parent's to announce.
        if (resume !== undefined) await this.#announceUnrecorded(resume)
        throw error
      },
    )
    this.#track(
      toolCallId,
      child.catch(() => undefined),
    )
    return child
  }

  /**
   * The call is answered while children it ran paused for approval: it timed out, or the task
   * stopped (the user interrupted it, or the host failed) before they could pause it. They will
   * never be carried on, so each is settled (see `link`), its waiting calls denied with a reason
   * that says why, and its session keeps no call pending that nothing could ever decide.
   */
  #stopPaused(toolCallId: string): void {
    const children = this.paused.get(toolCallId) ?? []
    this.paused.delete(toolCallId)
    const timeout = this.#signals.get(toolCallId)?.timeout
    const reason =
      timeout !== undefined ? TIMED_OUT_REASON : this.#rt.hostFailure() ? FAILED_REASON : INTERRUPTED_REASON
    const list = this.#resumes.get(toolCallId) ?? []
    for (const child of children) {
      // As the parent's history would name them: a call of the child's own by the child's session.
      const requests = child.pending.map((entry) => ({
        ...entry,
        sessionId: entry.sessionId ?? child.sessionId,
      }))
      const approvals = requests.map((entry) => ({
        toolCallId: entry.toolCallId,
        sessionId: entry.sessionId,
        approved: false,
        reason,
      }))
      const resume = { sessionId: child.sessionId, approvals, requests }
      if (timeout !== undefined) this.#timedOut.set(resume, timeout)
      list.push(resume)
    }
    this.#resumes.set(toolCallId, list)
  }

  #track(toolCallId: string, ended: Promise<TaskOutcome | undefined>): void {
    this.#all.push(ended)
    const list = this.#byCall.get(toolCallId) ?? []
    list.push(ended)
    this.#byCall.set(toolCallId, list)
  }

  /**
   * Carries a paused child on with its decisions under an aborted signal, so its session records
   * and announces them (as the parent's history does) and answers its calls; nothing runs. The
   * task's interrupt (or host failure) is the child's, and so is the time limit its call ran out
   * of (the child ends `error` with code `timeout`, as one stopped while it ran); otherwise the
   * call ended without it (or the user sent a new message instead), and the child ends `error`
   * saying so (`SubAgentNotCarriedOn`). A child whose session is gone, or that fails to settle, is
   * left as it is (the parent's result says what happened).
   */
  async #settleNotCarriedOn(toolCallId: string, resume: ChildResume): Promise<TaskOutcome | undefined> {
    const rt = this.#rt
    const signal = rt.signal.aborted
      ? rt.signal
      : AbortSignal.abort(
          this.#timedOut.has(resume)
            ? this.#timedOut.get(resume)
            : new SubAgentNotCarriedOn(this.#notCarriedOn),
        )
    try {
      const info = await rt.store.info(resume.sessionId)
      if (info !== undefined) {
        const spec = { name: info.subAgent?.name ?? 'sub_agent' }
        return (await rt.runSubAgent({ rt, toolCallId, signal }, spec, [], resume)).outcome
      }
    } catch {
      // Left as it is: the store failed it (or it failed the store's check).
    }
    await this.#announceUnrecorded(resume)
    return undefined
  }

  /**
   * Announces the decisions of `resume` that no sub-agent session records, after carrying it on or
   * settling it failed (its session is gone, or a write failed before its decisions were recorded): the
   * parent's history records them, and its replay shows each one that no sub-agent's replay shows,
   * where it waited (the sub-agent's session id and response). One the sub-agent recorded it
   * announced itself. A session that cannot be read counts as recording none.
   */
  async #announceUnrecorded(resume: ChildResume): Promise<void> {
    const histories = new Map<string, readonly HistoryEvent[]>()
    const read = async (sessionId: string) => {
      let history = histories.get(sessionId)
      if (history === undefined) {
        history = await this.#rt.store.read(sessionId).catch(() => [])
        histories.set(sessionId, history)
      }
      return history
    }
    for (const [i, decision] of resume.approvals.entries()) {
      const request = resume.requests[i]
      const sessionId = request?.sessionId
      if (request === undefined || sessionId === undefined) continue
      if (decidedIn(await read(sessionId), request.toolCallId)) continue
      const responseId = request.subAgentResponseId ?? request.responseId
      this.#rt.events.emitFor(sessionId, 'tool_approval_decision', {
        ...(responseId !== undefined ? { responseId } : {}),
        toolCallId: request.toolCallId,
        toolName: request.toolName,
        approved: decision.approved,
        ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      })
    }
  }

  /**
   * The call's outcome as its result will say it, given once every child it started has closed
   * its session (so a watcher sees them end before the result, as the parent's replay shows them:
   * see docs/sessions.md). Unless the outcome has a UI extra of its own (the tool's, which is
   * kept as it is), it links the children, in the order they started: the first as `sessionId`,
   * the others as `moreSessionIds`, with the first one's accounting unless the tool gave some.
   *
   * The call has ended, so paused children it was to carry on and did not (it was interrupted
   * before it ran, or it ended without calling `runSubAgent` for them) never will: each is
   * settled here, after those it started (see `settleNotCarriedOn`), and linked too. So is a child
   * that paused when the call is `answered` (it gets its result now, not suspended): the task
   * stopped before the child could pause it (see `#stopPaused`).
   */
  async link(toolCallId: string, outcome: ToolOutcome, answered = false): Promise<ToolOutcome> {
    this.#settleLeft(toolCallId)
    const children = this.#byCall.get(toolCallId)
    if (children === undefined) return outcome
    let ended = await Promise.all(children)
    if (answered && this.paused.has(toolCallId)) {
      this.#stopPaused(toolCallId)
      this.#settleLeft(toolCallId)
      ended = await Promise.all(children)
    }
    // A child settled after it paused ran two tasks for the call: it is linked once, where it
    // started, with its latest task's accounting.
    const latest = new Map<string, TaskOutcome>()
    for (const child of ended) if (child !== undefined) latest.set(child.sessionId, child)
    return withSessionLinks(outcome, [...latest.values()])
  }

  /** Settles the paused children the call was to carry on and did not, one after the other. */
  #settleLeft(toolCallId: string): void {
    const left = this.#resumes.get(toolCallId)
    if (left === undefined || left.length === 0) return
    this.#resumes.delete(toolCallId)
    // One after the other, in the order they were started, as the call would have carried them on.
    let before: Promise<unknown> = Promise.resolve()
    for (const resume of left) {
      const settled = before.then(() => this.#settleNotCarriedOn(toolCallId, resume))
      this.#track(toolCallId, settled)
      before = settled
    }
  }

  /** Every child's outcome once all have ended, in the order they started (failed ones left out). */
  async ended(): Promise<TaskOutcome[]> {
    return (await Promise.all(this.#all)).filter((outcome) => outcome !== undefined)
  }
}

/**
 * `outcome` linking the sub-agent sessions `children` ran, in that order: the first as `sessionId`,
 * the others as `moreSessionIds`, with the first one's accounting unless the outcome has some. An
 * outcome with a UI extra of its own (the tool's) is kept as it is, as is one with no children.
 */
export function withSessionLinks(
  outcome: ToolOutcome,
  children: readonly { sessionId: string; metadata?: TaskOutcome['metadata'] | undefined }[],
): ToolOutcome {
  const [first, ...more] = children
  if (first === undefined || outcome.uiExtra !== undefined) return outcome
  const moreSessionIds = more.map((child) => child.sessionId)
  const uiExtra: ToolResultUiExtra =
    moreSessionIds.length === 0
      ? { type: 'session', sessionId: first.sessionId }
      : { type: 'session', sessionId: first.sessionId, moreSessionIds }
  // One result has one accounting: the first sub-agent's, as its `sessionId` names it. Every
  // sub-agent's is in the task's `task_metadata.subAgents`.
  const taskMetadata = outcome.taskMetadata ?? first.metadata?.main
  return taskMetadata === undefined ? { ...outcome, uiExtra } : { ...outcome, uiExtra, taskMetadata }
}

/** Whether `history` (a sub-agent's) records a decision on its call `toolCallId`, after the request. */
function decidedIn(history: readonly HistoryEvent[], toolCallId: string): boolean {
  for (let i = history.length - 1; i >= 0; i--) {
    const record = history[i]!
    if ('role' in record) continue
    if (
      record.type === 'approval_request' &&
      record.toolCallId === toolCallId &&
      record.sessionId === undefined
    )
      return false
    if (
      record.type === 'approval_decision' &&
      record.toolCallId === toolCallId &&
      record.sessionId === undefined
    )
      return true
  }
  return false
}
