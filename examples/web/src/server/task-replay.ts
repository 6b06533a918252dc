import type { HistoryEvent, ReplayEvent } from '@kode/protocol'
import { deriveReplayEvents, type SubSessionHistories } from '@kode/session'

/** How a task of this server goes on from the stored history. */
export type TaskStart = 'run' | 'approvals' | 'continue'

/**
 * The replay a task's events extend, for a task that starts from `history`. Approval decisions
 * open a new turn, so they follow the whole replay. `agent.continue()` and a new message on a task
 * whose process died inside a turn carry that turn on (the calls' results, then its `turn_end`;
 * a new message's turn follows), so they follow the replay without the `turn_end` the derivation
 * adds only because the history ends there; a task that died between turns starts a new one after
 * the full replay. Either way, the replay then the task's events are the replay of the history
 * the task leaves.
 */
export function taskReplay(
  history: readonly HistoryEvent[],
  sessionId: string,
  subSessions: SubSessionHistories,
  start: TaskStart,
): ReplayEvent[] {
  const events = deriveReplayEvents(history, { sessionId, subSessions })
  if (start !== 'approvals' && endsInOpenTurn(events, sessionId)) events.pop()
  return events
}

/**
 * Whether the replay ends with a turn of the session whose tool calls did not all get a result:
 * the turn `agent.continue()` or a new message carries on. (Events of sub-agents replayed inline carry their own
 * session ids.)
 */
function endsInOpenTurn(events: readonly ReplayEvent[], sessionId: string): boolean {
  if (events.at(-1)?.type !== 'turn_end') return false
  const answered = new Set<string>()
  for (let i = events.length - 2; i >= 0; i--) {
    const event = events[i]!
    if (event.sessionId !== sessionId) continue
    if (event.type === 'turn_start') return false
    if (event.type === 'tool_result') answered.add(event.toolCallId)
    if (event.type === 'tool_call' && !answered.has(event.toolCallId)) return true
  }
  return false
}
