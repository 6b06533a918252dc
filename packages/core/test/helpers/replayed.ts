import type { Event, HistoryEvent } from '@kode/protocol'
import { deriveReplayEvents } from '@kode/session'

/** The event types a replay of the history derives; the rest (task boundaries, deltas, budgets) are live only. */
const REPLAYED = new Set<string>([
  'user_message',
  'developer_message',
  'turn_start',
  'turn_end',
  'response_complete',
  'assistant_image_delta',
  'tool_call',
  'tool_progress',
  'tool_approval_request',
  'tool_approval_decision',
  'tool_result',
  'usage',
  'task_metadata',
  'todo_change',
  'error',
  'interrupt',
  'compaction_start',
  'compaction_end',
])

/** The live events a replay shows too, as JSON would carry them (no `undefined` fields). */
export function replayedPart(events: readonly Event[]): unknown[] {
  return JSON.parse(JSON.stringify(events.filter((event) => REPLAYED.has(event.type))))
}

/** The replay of a history, as JSON would carry it. */
export function replayOf(history: readonly HistoryEvent[], sessionId: string): unknown[] {
  return JSON.parse(JSON.stringify(deriveReplayEvents(history, { sessionId })))
}

/**
 * What a watcher shows for a task that carries a history on: the replay of the history, without
 * the `turn_end` the derivation adds only because the history ends there (the turn may go on),
 * then the task's live events.
 */
export function replayThenLive(
  history: readonly HistoryEvent[],
  sessionId: string,
  live: readonly Event[],
): Event[] {
  const replay: Event[] = deriveReplayEvents(history, { sessionId })
  if (replay.at(-1)?.type === 'turn_end') replay.pop()
  return [...replay, ...live]
}
