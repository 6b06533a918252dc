import type { HistoryEvent, ReplayEvent } from '@kode/protocol'
import { HeldRecords } from '../held-records.js'
import { addResultLinks, isLastInTurn } from './lookahead.js'
import {
  type PendingCall,
  type ReplayContext,
  SessionReplay,
  type SubSessionHistories,
} from './session-replay.js'
import { SubSessionReplay } from './sub-session-replay.js'
import { WorkStack } from './work-stack.js'

export type { SubSessionHistories } from './session-replay.js'

/** Options of `deriveReplayEvents` and `createReplayDeriver`. */
export interface ReplayOptions {
  /** The session id every derived event carries (default `''`). */
  sessionId?: string | undefined
  /**
   * Sub-agent sessions to replay inline: a tool result linking a child session
   * (`uiExtra: { type: 'session', sessionId }`) is preceded by that session's own replay. The
   * deriver of `createReplayDeriver` looks a session up when the record linking it is replayed,
   * so a map that grows as the history is read serves it too.
   */
  subSessions?: SubSessionHistories | undefined
}

/**
 * Derives the protocol events a UI replays for a persisted history, the same events the engine
 * emitted live; the result passes `checkEventOrder`:
 *
 * - `user_message` per user message (text joined, images, `mode` and `modeContext` when present); `developer_message` per
 *   developer message; system messages are not replayed.
 * - Each assistant message is one turn: `turn_start`, an `assistant_image_delta` per image part,
 *   `response_complete` (text parts joined, thinking joined as `thinkingText`), and `usage` when it
 *   carries usage and is not an error response. Its tool calls are replayed as `tool_call`
 *   together, in call order, as the engine starts them: after the response's approval requests,
 *   before the first record of the running calls, or at the end of the turn (a call waiting for
 *   approval once decided). So a history cut anywhere in its calls replays them where the whole
 *   history does. (A
 *   turn per response holds for any history, including ones another tool wrote, since that is
 *   what `checkEventOrder` and the live engine need: see docs/sessions.md.)
 * - `tool_result` per tool result (`aborted` is reported as `error`, then an `interrupt`), preceded
 *   by the replay of the sub-agent session it links, and followed by `todo_change` when the result
 *   carries a todo list with the `todo_change` side effect.
 * - An aborted assistant message ends its turn with an `interrupt`, also when its last tool result
 *   was aborted and so already followed by one. `turn_end` closes the turn at the next user,
 *   developer or assistant message, at a task-metadata record, or at the end.
 * - Records: `error` becomes `error`, `interrupt` becomes `interrupt`, `task_metadata` becomes
 *   `task_metadata`; `compaction` becomes `compaction_start`, an `error` (`canRetry: true`) per
 *   notice of its `retries`, then `compaction_end` (`compacted: true`, with its summary and token
 *   counts): an automatic one in the turn it opens for the response that follows, a manual one
 *   between tasks, or inside the turn a dead process left open. The records it
 *   summarised are replayed in full before it: replay always shows the whole history.
 * - `approval_request` and `approval_decision` become `tool_approval_request` and
 *   `tool_approval_decision`. A sub-agent's call recorded in its parent's history carries the
 *   sub-agent's session id and response id, as it did live, unless the sub-agent's replay shows
 *   it inline: its session is among `subSessions`, and the parent's call that ran it has no
 *   result yet (the parent is still paused), a first result that links that session, or a result
 *   that links none while the sub-agent never got the decision (a new user message denied the
 *   call; the parent then shows the denial, as it did live). Then the sub-agent's replay is split
 *   where it paused: its records up to the end of the task that asked are replayed at the
 *   parent's request (where they ran live, inside the parent's task), the rest before that
 *   result (the sub-agent carried on in a later task).
 *   The parent's call that waits is replayed with its result, in a later task. A decision,
 *   progress or result that comes with no turn open (a task carried on by `agent.continue`) opens
 *   a turn without a response, as `continue` does live; a decision the sub-agent's replay shows
 *   opens it too.
 *
 * Every event carries the `createdAt` of the record it comes from (a `tool_call` that of its
 * assistant message); a turn's closing events carry the time of its latest record. To replay a
 * history as it is read, without holding all of it, use `createReplayDeriver`.
 */
export function deriveReplayEvents(
  history: readonly HistoryEvent[],
  options: ReplayOptions = {},
): ReplayEvent[] {
  const deriver = createReplayDeriver(options)
  const events = deriver.push(history)
  for (const event of deriver.end()) events.push(event)
  return events
}

/**
 * Derives a replay piece by piece, for a history read in batches (`SessionStore.readBatches`):
 * the concatenation of what `push` and `end` return is exactly `deriveReplayEvents` of the whole
 * history, however it was split. Records whose events depend on records not read yet are held
 * until those arrive: a tool result until the next message (is it the last of its turn?), and a
 * sub-agent's approval request until the result of the call that ran the sub-agent (is it shown
 * inline?). So a deriver holds at most a few records, unless a history ends waiting for approval.
 */
export interface ReplayDeriver {
  /** Takes the next records of the history, in order; returns the events they complete. */
  push(records: readonly HistoryEvent[]): ReplayEvent[]
  /** Ends the history: returns the events of the records still held and closes the last turn. */
  end(): ReplayEvent[]
}

/** A `ReplayDeriver` for one session's history (see `deriveReplayEvents` for the rules). */
export function createReplayDeriver(options: ReplayOptions = {}): ReplayDeriver {
  const sessionId = options.sessionId ?? ''
  const subSessions = options.subSessions ?? new Map()
  /** Sessions whose replay has begun (this one's too), so none is replayed twice. */
  const begun = new Set([sessionId])
  /** Sub-agent replays that stopped where their sub-agent paused, to go on later. */
  const paused = new Map<string, SubSessionReplay>()
  /** The calls each sub-agent session records a decision on, as they are asked for. */
  const decisions = new Map<string, Set<string>>()
  const work = new WorkStack()
  const startChild = (childId: string, pausedFor: PendingCall | undefined) => {
    if (!context.mayReplay(childId)) return
    begun.add(childId)
    // A sub-agent's history comes whole, and the sessions it links were loaded with it.
    const child = paused.get(childId) ?? new SubSessionReplay(childId, context, subSessions.get(childId)!)
    // Not resumable while it runs: a link cycle back to it finds it taken.
    paused.delete(childId)
    if (pausedFor === undefined) child.toEnd()
    else child.toPause(pausedFor, () => paused.set(childId, child))
  }
  const context: ReplayContext = {
    out: [],
    work,
    mayReplay: (childId) => subSessions.has(childId) && (!begun.has(childId) || paused.has(childId)),
    replayChild(childId, pausedFor) {
      work.push(() => {
        startChild(childId, pausedFor)
        return false
      })
    },
    decidedIn(childId, toolCallId) {
      const history = subSessions.get(childId)
      if (history === undefined) return false
      let decided = decisions.get(childId)
      if (decided === undefined) {
        decided = new Set()
        for (const record of history) {
          // Its own calls' decisions: one with `sessionId` is a deeper sub-agent's call's.
          if (!('role' in record) && record.type === 'approval_decision' && record.sessionId === undefined)
            decided.add(record.toolCallId)
        }
        decisions.set(childId, decided)
      }
      return decided.has(toolCallId)
    },
  }
  const replay = new IncrementalReplay(sessionId, context, work)
  let ended = false
  const collect = (run: () => void): ReplayEvent[] => {
    if (ended) throw new Error('the replay deriver has ended: create a new one')
    const out: ReplayEvent[] = []
    context.out = out
    run()
    return out
  }
  return {
    push: (records) => collect(() => replay.push(records)),
    end: () => {
      const out = collect(() => {
        replay.end()
        // Sub-agents paused where no result carries their replay on (only in histories written
        // elsewhere, or link cycles): the rest of each, so their turns close too.
        for (let next = first(paused); next !== undefined; next = first(paused)) {
          context.replayChild(next)
          work.run()
        }
      })
      ended = true
      return out
    },
  }
}

/**
 * Feeds a `SessionReplay` the records it can replay so far and holds the rest: what a record's
 * replay depends on is looked up in the records read so far, and a record whose answer may still
 * come waits (with every record after it, to keep the order) until it does, or the history ends.
 */
class IncrementalReplay {
  /** Records read and not replayed yet, in order. */
  private readonly held = new HeldRecords((records, ended) => this.drain(records, ended))
  /** The calls the records read so far answer, with the sessions each first result links. */
  private readonly resultLinks = new Map<string, readonly string[]>()
  private readonly replay: SessionReplay

  constructor(
    sessionId: string,
    context: ReplayContext,
    /** Runs what each record scheduled (the replays of the sub-agents it shows), before the next. */
    private readonly work: WorkStack,
  ) {
    this.replay = new SessionReplay(sessionId, context, this.resultLinks)
  }

  push(records: readonly HistoryEvent[]): void {
    addResultLinks(records, this.resultLinks)
    this.held.push(records)
  }

  end(): void {
    this.held.end()
    this.replay.closeTurn()
  }

  /** Replays `records` in order until one must wait; returns its index (the length when none). */
  private drain(records: readonly HistoryEvent[], ended: boolean): number {
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!
      if (!('role' in record)) {
        // Shown inline or not: the first result of the call that ran the sub-agent says.
        if (!ended && record.type === 'approval_request' && record.subAgentCall) {
          if (!this.resultLinks.has(record.subAgentCall.toolCallId)) return i
        }
        this.replay.record(record)
        this.work.run()
      } else if (record.role === 'tool') {
        const last = isLastInTurn(records, i)
        if (last === undefined && !ended) return i
        this.replay.message(record, last ?? true)
        this.work.run()
      } else {
        this.replay.message(record, false)
      }
    }
    return records.length
  }
}

function first(map: ReadonlyMap<string, unknown>): string | undefined {
  for (const key of map.keys()) return key
  return undefined
}
