import type { HistoryEvent } from '@kode/protocol'
import { addResultLinks, isLastInTurn } from './lookahead.js'
import { type PendingCall, type ReplayContext, SessionReplay } from './session-replay.js'
import type { WorkStack } from './work-stack.js'

/**
 * A sub-agent session's replay, nested in its parent's. Its history comes whole, so nothing waits
 * for later records; it is replayed in parts when the sub-agent paused for approval: up to its
 * pause where the parent recorded the pending call (the sub-agent ran then, in the parent's
 * task), the rest where the parent's call has its result (the sub-agent carried on in a later
 * task). Live, each part's events came in its own task.
 */
export class SubSessionReplay {
  /** The index of the next record to replay. */
  private next = 0
  private readonly replay: SessionReplay
  private readonly work: WorkStack

  constructor(
    private readonly sessionId: string,
    context: ReplayContext,
    private readonly history: readonly HistoryEvent[],
  ) {
    const links = new Map<string, readonly string[]>()
    addResultLinks(history, links)
    this.replay = new SessionReplay(sessionId, context, links)
    this.work = context.work
  }

  /**
   * Schedules the replay up to the end of the task in which the sub-agent recorded the approval
   * request of `call` (its own, or a deeper sub-agent's; nothing when no request for it is left:
   * replayed already, several calls paused the same task), then `then`.
   */
  toPause(call: PendingCall, then: () => void): void {
    this.replayTo(pauseEnd(this.history, this.next, call, this.sessionId), then)
  }

  /** Schedules the replay of the rest, which closes the last turn. */
  toEnd(): void {
    this.replayTo(this.history.length, () => this.replay.closeTurn())
  }

  /**
   * Replays the records up to `stop` as a task of the work stack: it steps aside for the
   * sub-agent replays a record schedules, and goes on once they are done.
   */
  private replayTo(stop: number, then: () => void): void {
    const { history, replay, work } = this
    work.push(() => {
      const mark = work.size
      while (this.next < stop) {
        const index = this.next++
        const record = history[index]!
        if (!('role' in record)) replay.record(record)
        else replay.message(record, record.role === 'tool' && (isLastInTurn(history, index) ?? true))
        if (work.size > mark) return true
      }
      then()
      return false
    })
  }
}

/**
 * Where the part of `history` (the session `sessionId`'s) from `from` that ends with the
 * sub-agent's pause for `call` ends: after the `task_metadata` that closed the task of its request
 * (after the request, in a history cut before it); `from` when no request for the call is left.
 */
function pauseEnd(
  history: readonly HistoryEvent[],
  from: number,
  call: PendingCall,
  sessionId: string,
): number {
  let request = from
  while (request < history.length && !isRequestFor(history[request]!, call, sessionId)) request++
  if (request === history.length) return from
  for (let i = request + 1; i < history.length; i++) {
    const record = history[i]!
    if (!('role' in record) && record.type === 'task_metadata') return i + 1
  }
  return request + 1
}

/** Whether `record`, of the session `sessionId`, is the approval request of `call`. */
function isRequestFor(record: HistoryEvent, call: PendingCall, sessionId: string): boolean {
  return (
    !('role' in record) &&
    record.type === 'approval_request' &&
    record.toolCallId === call.toolCallId &&
    (record.sessionId ?? sessionId) === call.sessionId
  )
}
