import type {
  ApprovalRequestRecord,
  AssistantMessage,
  CompactionAttempt,
  CompactionEndEvent,
  CompactionReason,
  HistoryEvent,
  HistoryRecord,
  Message,
  RecordTurn,
  ReplayEvent,
  SubAgentCall,
  ToolCallEvent,
  ToolResultMessage,
} from '@kode/protocol'
import { approvalResponseId, sessionCallKey } from '@kode/protocol/helpers'
import { linkedSessions } from './linked-sessions.js'
import {
  emitResponse,
  type ReplaySink,
  toolCallEvent,
  toolResultEvent,
  userMessageEvent,
} from './replay-events.js'
import type { WorkStack } from './work-stack.js'

/** Histories of sub-agent sessions, by session id, as `loadSubSessions` returns them. */
export type SubSessionHistories = ReadonlyMap<string, readonly HistoryEvent[]>

/**
 * The calls with a result among the records read so far, each with the sub-agent sessions its
 * first result links (empty: none).
 */
export type ResultLinks = ReadonlyMap<string, readonly string[]>

/** Shared by a session's replay and the sub-agent replays nested in it. */
export interface ReplayContext {
  /** Where every replay of this derivation puts its events. */
  out: ReplayEvent[]
  /**
   * Whether the sub-agent session `sessionId` can be replayed inline: it is among `subSessions`,
   * and its replay has not begun or stopped where the sub-agent paused. Not while it is being
   * replayed, so a link cycle cannot recurse forever.
   */
  mayReplay(sessionId: string): boolean
  /**
   * Schedules the replay of the sub-agent session `sessionId` into `out` from where its replay
   * stopped: with `pausedFor`, to the end of the task in which it recorded that call's approval
   * request (what it ran before it paused); otherwise to its end. It does nothing when, by then,
   * `mayReplay` says no. Scheduled on `work`, not run, so nesting never grows the call stack: the
   * caller schedules what follows the child's replay first (see `WorkStack`).
   */
  replayChild(sessionId: string, pausedFor?: PendingCall): void
  /** The work of this derivation: sub-agent replays and what follows them. */
  work: WorkStack
  /**
   * Whether the sub-agent session `sessionId` is given and records a decision on its own call
   * `toolCallId` (not on a call of its own sub-agents that has the same id).
   */
  decidedIn(sessionId: string, toolCallId: string): boolean
}

/**
 * A call awaiting approval: its id and the session it waits in. Call ids are unique within a
 * session only, so two sessions may wait on calls of the same id.
 */
export interface PendingCall {
  toolCallId: string
  sessionId: string
}

/**
 * Replays one session's records, one at a time, into the shared output: the turn state and the
 * calls waiting for their results. What a record's replay needs from later records (whether a tool
 * result is the last of its turn, which calls the history answers) is worked out by the caller,
 * `IncrementalReplay`, so this class never looks ahead.
 */
export class SessionReplay implements ReplaySink {
  private turnOpen = false
  private turnAborted = false
  /**
   * The open turn has no response yet: one an automatic compaction opened (it ran after the
   * turn's `turn_start` live, before the model call), whose response, or failure, is next.
   */
  private turnAwaitsResponse = false
  private lastTimestamp = 0
  /**
   * Tool calls without their result: of the open turn, and of earlier turns when they wait for
   * approval or for their sub-agent.
   */
  private readonly pendingCalls = new Map<string, ToolCallEvent>()
  /**
   * This session's calls whose approval was requested and not decided yet, with the request's
   * response id.
   */
  private readonly awaitingApproval = new Map<string, string | undefined>()
  /**
   * The same for sub-agents' calls recorded here, by `sessionCallKey`: call ids are unique within
   * a session only, so two sub-agents (or a sub-agent and this session) may wait on the same id.
   */
  private readonly awaitingInSubAgents = new Map<string, string | undefined>()
  /**
   * Calls that ran a sub-agent which paused for approval: replayed when their result comes, and
   * forgotten then (a later call may reuse the id; a long replay holds only the calls waiting).
   */
  private readonly suspendedCalls = new Set<string>()
  /**
   * Sub-agents' calls whose request the sub-agent's replay showed inline, with the response id
   * of that request, by `sessionCallKey`: their decision is shown here when the sub-agent's
   * session does not record it (a new user message denied it in this session alone).
   */
  private readonly shownInline = new Map<string, string | undefined>()
  /** Calls of `pendingCalls` whose `tool_call` was replayed. */
  private readonly announced = new Set<string>()
  /** This session's calls of `pendingCalls` whose approval was requested (decided or not). */
  private readonly requested = new Set<string>()

  constructor(
    private readonly sessionId: string,
    private readonly context: ReplayContext,
    /** The calls the history has a result for (at least those up to the record replayed). */
    private readonly resultLinks: ResultLinks,
  ) {}

  /** Puts an event in the output (public for `emitResponse`, which takes this replay as its sink). */
  emit(event: ReplayEvent): void {
    this.context.out.push(event)
    if (event.timestamp > this.lastTimestamp) this.lastTimestamp = event.timestamp
  }

  /** Replays a message; a tool result's `isLastInTurn` is worked out by the caller. */
  message(message: Message, isLastInTurn: boolean): void {
    const { sessionId } = this
    // Only the next record may be the response of a turn an automatic compaction opened.
    const awaited = this.turnAwaitsResponse
    this.turnAwaitsResponse = false
    switch (message.role) {
      case 'system':
        return
      case 'user':
        this.closeTurn()
        this.emit(userMessageEvent(sessionId, message))
        return
      case 'developer':
        this.closeTurn()
        this.emit({ type: 'developer_message', sessionId, timestamp: message.createdAt, item: message })
        return
      case 'assistant':
        if (!awaited) this.closeTurn()
        this.assistant(message, awaited)
        return
      case 'tool':
        this.toolResult(message, isLastInTurn)
        return
      default: {
        const unknown: never = message
        void unknown
      }
    }
  }

  /** Replays a record that is not a message. */
  record(event: HistoryRecord): void {
    const { sessionId } = this
    const awaited = this.turnAwaitsResponse
    this.turnAwaitsResponse = false
    const timestamp = event.createdAt
    switch (event.type) {
      case 'error':
        if (event.compaction) {
          this.unsavedCompaction(event.compaction, timestamp, awaited, event.message)
          return
        }
        // A retry's notice (`retry`; before that field, only the billed ones were kept, with
        // `usage`) was announced in the turn of the response that followed: that turn is opened
        // for it, as for an automatic compaction. Other errors stay where `turn` says.
        if (event.canRetry && (event.retry || event.usage)) this.placeBeforeResponse(timestamp, awaited)
        else this.place(event.turn, timestamp, awaited)
        this.emit({
          type: 'error',
          sessionId,
          timestamp,
          errorMessage: event.message,
          canRetry: event.canRetry,
        })
        return
      case 'interrupt':
        if (event.compaction) {
          this.unsavedCompaction(event.compaction, timestamp, awaited)
          return
        }
        this.place(event.turn, timestamp, awaited)
        // A call interrupted before any output that its provider billed: announced as live. (An
        // error record's usage has no event, as a failed response's has none.)
        if (event.usage) {
          const { usage, costUsd } = event
          this.emit(
            costUsd === undefined
              ? { type: 'usage', sessionId, timestamp, usage }
              : { type: 'usage', sessionId, timestamp, usage, costUsd },
          )
        }
        this.emit({ type: 'interrupt', sessionId, timestamp })
        return
      case 'task_metadata':
        this.closeTurn()
        this.emit({ type: 'task_metadata', sessionId, timestamp, metadata: event.metadata })
        return
      case 'compaction': {
        // A marker where it ran: the records it summarised were replayed above, as they happened.
        const { reason, tokensBefore, tokensAfter, summary, firstKeptId, retries } = event
        this.compactionEvents(timestamp, awaited, retries, {
          reason,
          compacted: true,
          tokensBefore,
          tokensAfter,
          summary,
          firstKeptId,
        })
        return
      }
      case 'approval_request': {
        const { toolCallId, toolName, subAgentCall } = event
        // A sub-agent's call shows the sub-agent's response, as its request did live.
        const responseId = approvalResponseId(event)
        // Where the call waits: a sub-agent's session, or this one (absent).
        const waitsIn = event.sessionId
        if (subAgentCall) {
          // Recorded once the calls have run: the call that ran the sub-agent was announced.
          this.announceRunning(timestamp)
          this.suspendedCalls.add(subAgentCall.toolCallId)
          if (this.replaysInline(event, subAgentCall)) {
            // Its request is shown where the sub-agent ran, live: in the task it paused, before
            // this record (written once the sub-agent's task had ended). Set first: the child's
            // replay, run after this, never reads this session's state.
            const pending = { toolCallId, sessionId: waitsIn ?? subAgentCall.sessionId }
            this.shownInline.set(sessionCallKey(pending.sessionId, toolCallId), responseId)
            this.context.replayChild(subAgentCall.sessionId, pending)
            return
          }
        }
        if (waitsIn === undefined) {
          this.awaitingApproval.set(toolCallId, responseId)
          this.requested.add(toolCallId)
        } else this.awaitingInSubAgents.set(sessionCallKey(waitsIn, toolCallId), responseId)
        this.emit({
          type: 'tool_approval_request',
          sessionId: event.sessionId ?? sessionId,
          timestamp,
          ...(responseId !== undefined ? { responseId } : {}),
          toolCallId,
          toolName,
          arguments: event.arguments,
        })
        return
      }
      case 'approval_decision': {
        const { toolCallId, toolName, approved, reason } = event
        // Decided in a turn a dead process left open: the calls that ran beside the requests were
        // announced by that process, before it died, so before the decision.
        if (this.turnOpen) this.announceRunning(timestamp, this.requested)
        // The turn `continue` opens before it records the decisions, even when the sub-agent's
        // replay shows this one (it did live, carrying on).
        this.continueTurn(timestamp)
        let responseId: string | undefined
        const key = event.sessionId === undefined ? toolCallId : sessionCallKey(event.sessionId, toolCallId)
        const waiting = event.sessionId === undefined ? this.awaitingApproval : this.awaitingInSubAgents
        if (waiting.has(key)) {
          responseId = waiting.get(key)
          waiting.delete(key)
        } else if (event.sessionId !== undefined) {
          // A sub-agent's call: its replay shows the decision it carried on with. One it never
          // got (a new user message here denied the call) was emitted here, live.
          if (!this.shownInline.has(key) || this.context.decidedIn(event.sessionId, toolCallId)) return
          responseId = this.shownInline.get(key)
          this.shownInline.delete(key)
        }
        this.emit({
          type: 'tool_approval_decision',
          sessionId: event.sessionId ?? sessionId,
          timestamp,
          ...(responseId !== undefined ? { responseId } : {}),
          toolCallId,
          toolName,
          approved,
          ...(reason !== undefined ? { reason } : {}),
        })
        return
      }
      case 'tool_progress': {
        const { toolCallId, toolName, message, siblingToolCallIds, responseId } = event
        // Progress comes from a running call: its `tool_call` is replayed first.
        this.continueTurn(timestamp)
        this.announceRunning(timestamp)
        this.emit({
          type: 'tool_progress',
          sessionId,
          timestamp,
          ...(responseId !== undefined ? { responseId } : {}),
          toolCallId,
          toolName,
          message,
          siblingToolCallIds,
        })
        return
      }
      default: {
        const unknown: never = event
        void unknown
      }
    }
  }

  /**
   * Replays, in call order, the `tool_call` of every call without a result that runs now: all but
   * those waiting for approval, those announced already and `except`. Called at the first record of the
   * running calls (a progress, a result, a sub-agent's approval request) and at the end of the
   * turn, so a response's calls are announced together once its approval requests are out, as the
   * engine starts them; and the replay of a history cut anywhere in its calls (a process that
   * died), followed by what a continued task emits, is the replay of the whole history.
   */
  private announceRunning(timestamp: number, except?: ReadonlySet<string>): void {
    if (this.announced.size === this.pendingCalls.size) return
    for (const [id, call] of this.pendingCalls) {
      if (this.announced.has(id) || this.awaitingApproval.has(id) || except?.has(id)) continue
      this.continueTurn(timestamp)
      this.announced.add(id)
      this.emit(call)
    }
  }

  /** Replays an assistant message; `inOpenTurn`: as the response of a turn opened for it. */
  private assistant(message: AssistantMessage, inOpenTurn: boolean): void {
    const { sessionId } = this
    if (!inOpenTurn) this.emit({ type: 'turn_start', sessionId, timestamp: message.createdAt })
    this.turnOpen = true
    this.turnAborted = message.stopReason === 'aborted'
    emitResponse(sessionId, message, this)
    const { parts } = message
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      if (part.type === 'tool_call') {
        this.pendingCalls.set(part.id, toolCallEvent(sessionId, message, part))
        this.announced.delete(part.id)
        this.requested.delete(part.id)
      }
    }
  }

  private toolResult(result: ToolResultMessage, isLastInTurn: boolean): void {
    this.continueTurn(result.createdAt)
    this.announceRunning(result.createdAt)
    const call = this.pendingCalls.get(result.toolCallId)
    this.suspendedCalls.delete(result.toolCallId)
    if (call) {
      this.pendingCalls.delete(result.toolCallId)
      // A call answered while it waited for approval (an interrupt) is announced with its result.
      if (!this.announced.delete(result.toolCallId)) this.emit(call)
    }
    const children = linkedSessions(result)
    if (children.length === 0) {
      this.resultEvents(result, call, isLastInTurn)
      return
    }
    // The result's events come after the children's replays, so they are scheduled first.
    const { work } = this.context
    work.push(() => {
      this.resultEvents(result, call, isLastInTurn)
      return false
    })
    for (let i = children.length - 1; i >= 0; i--) this.context.replayChild(children[i]!)
  }

  /** A tool result's own events, after the replays of the sub-agents it links. */
  private resultEvents(
    result: ToolResultMessage,
    call: ToolCallEvent | undefined,
    isLastInTurn: boolean,
  ): void {
    const { sessionId } = this
    this.emit(toolResultEvent(sessionId, result, call?.responseId, isLastInTurn))
    const timestamp = result.createdAt
    if (result.uiExtra?.type === 'todo_list' && result.sideEffects?.includes('todo_change')) {
      this.emit({ type: 'todo_change', sessionId, timestamp, todos: result.uiExtra.todos })
    }
    if (result.status === 'aborted') this.emit({ type: 'interrupt', sessionId, timestamp })
  }

  /**
   * Whether the sub-agent's pending call of `request`, recorded in this session too, is shown by
   * the sub-agent's own replay, so it is not shown twice. Its session must be given, and the call
   * that ran it here have either no result yet (the parent is still paused), a first result that
   * links that session (where its replay goes on), or a result that links none while the
   * sub-agent never got the call's decision (a new user message here denied the call). Otherwise
   * it is replayed here, with the sub-agent's session id, as it was live.
   */
  private replaysInline(request: ApprovalRequestRecord, via: SubAgentCall): boolean {
    if (!this.context.mayReplay(via.sessionId)) return false
    const links = this.resultLinks.get(via.toolCallId)
    if (links === undefined) return true
    if (links.length > 0) return links.includes(via.sessionId)
    // The session where the call waits (deeper, when the sub-agent's own sub-agent asked).
    return !this.context.decidedIn(request.sessionId ?? via.sessionId, request.toolCallId)
  }

  /**
   * Opens a turn without a response when none is open, for a decision, a tool's progress or a
   * result outside any turn: what `agent.continue` emits when it carries a paused task on (a
   * turn of the approved calls, before the next model call).
   */
  private continueTurn(timestamp: number): void {
    if (this.turnOpen) return
    this.emit({ type: 'turn_start', sessionId: this.sessionId, timestamp })
    this.turnOpen = true
    this.turnAborted = false
  }

  /**
   * Places an `error` or `interrupt` record's event where the live run emitted it (`turn`, see
   * `RecordTurn`): in a turn of its own, which stays open for what follows, or between turns.
   * Without `turn` it stays in the open turn, if any. `awaited`: the open turn awaits its
   * response (an automatic compaction opened it), so a failed or interrupted model call was its.
   */
  private place(turn: RecordTurn | undefined, timestamp: number, awaited: boolean): void {
    if (turn === undefined || (turn === 'own' && awaited)) return
    this.closeTurn()
    if (turn === 'own') {
      this.emit({ type: 'turn_start', sessionId: this.sessionId, timestamp })
      this.turnOpen = true
    }
  }

  /**
   * A compaction that saved nothing (an `error` record, with its message, or an `interrupt`
   * record marked `compaction`): its events as live, not an error or an interrupt.
   */
  private unsavedCompaction(
    attempt: CompactionAttempt,
    timestamp: number,
    awaited: boolean,
    errorMessage?: string,
  ): void {
    const { reason, tokensBefore, retries } = attempt
    this.compactionEvents(timestamp, awaited, retries, {
      reason,
      compacted: false,
      tokensBefore,
      ...(errorMessage !== undefined ? { errorMessage } : {}),
    })
  }

  /**
   * A compaction's events, where it ran (see `placeCompaction`): `compaction_start`, an `error`
   * with `canRetry: true` for each retry of its summary request (`retries`, their notices), then
   * `compaction_end` with `end`'s fields (a saved one's summary, or an unsaved one's outcome).
   */
  private compactionEvents(
    timestamp: number,
    awaited: boolean,
    retries: readonly string[] | undefined,
    end: Omit<CompactionEndEvent, 'type' | 'sessionId' | 'timestamp'>,
  ): void {
    const { sessionId } = this
    const { reason, tokensBefore } = end
    this.placeCompaction(reason, timestamp, awaited)
    this.emit({ type: 'compaction_start', sessionId, timestamp, reason, tokensBefore })
    for (const errorMessage of retries ?? [])
      this.emit({ type: 'error', sessionId, timestamp, errorMessage, canRetry: true })
    this.emit({ type: 'compaction_end', sessionId, timestamp, ...end })
  }

  /**
   * Places a compaction's events (a `compaction` record, or an `error` record marking one that
   * saved nothing) where it ran. A manual one ran between tasks: a turn still open there is one a
   * process that died left open, which the next task carries on (or closes) after the compaction,
   * so it stays open, as it was (its calls the dead process had started announced first, as they
   * were live). An automatic one ran in the turn whose model call needed the room, before that
   * call: the turn is opened for the response, or kept when an earlier compaction of the same call
   * opened it (`awaited`).
   */
  private placeCompaction(reason: CompactionReason, timestamp: number, awaited: boolean): void {
    if (reason !== 'manual') {
      this.placeBeforeResponse(timestamp, awaited)
      return
    }
    if (!this.turnOpen) return
    this.announceRunning(timestamp)
    this.turnAwaitsResponse = awaited
  }

  /**
   * Places an event that ran in a turn before its model call answered (an automatic compaction, a
   * retry): in the turn opened for the response, kept when an earlier one opened it (`awaited`).
   */
  private placeBeforeResponse(timestamp: number, awaited: boolean): void {
    if (awaited) {
      this.turnAwaitsResponse = true
      return
    }
    this.closeTurn()
    this.openTurnForResponse(timestamp)
  }

  /** Opens a turn whose response comes next (see `turnAwaitsResponse`). */
  private openTurnForResponse(timestamp: number): void {
    this.emit({ type: 'turn_start', sessionId: this.sessionId, timestamp })
    this.turnOpen = true
    this.turnAwaitsResponse = true
  }

  /** Ends the open turn, if any (at the next turn, a task boundary, or the end of the history). */
  closeTurn(): void {
    if (!this.turnOpen) return
    const timestamp = this.lastTimestamp
    // Calls that never got a result are still shown, at the end of their turn; a call that awaits
    // approval runs later (its result follows the decision, in a later task), and one whose
    // sub-agent waits is answered later. Usually there are none, and a turn then costs no iterator.
    if (this.pendingCalls.size > 0) {
      this.announceRunning(timestamp)
      for (const id of this.pendingCalls.keys()) {
        if (this.awaitingApproval.has(id) || this.suspendedCalls.has(id)) continue
        this.announced.delete(id)
        this.pendingCalls.delete(id)
      }
    }
    // Even right after an aborted tool result's own interrupt: the turn was interrupted too.
    if (this.turnAborted) this.emit({ type: 'interrupt', sessionId: this.sessionId, timestamp })
    this.emit({ type: 'turn_end', sessionId: this.sessionId, timestamp })
    this.turnOpen = false
    this.turnAborted = false
    this.turnAwaitsResponse = false
  }
}
