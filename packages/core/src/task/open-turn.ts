import type { HistoryEvent } from '@kode/protocol'

/**
 * Whether the history ends inside a turn that awaits its response: its last record (after any
 * manual compaction, which ran between tasks) is one a task writes in a turn before the model
 * call answers (an automatic compaction, saved, failed or interrupted, or a retry's notice). The process that wrote it had opened the turn and died before the response,
 * and the replay shows whatever comes next in that turn: a response carries it on, a message
 * closes it.
 */
export function endsAwaitingResponse(history: readonly HistoryEvent[]): boolean {
  // A manual compaction (saved or not) ran between tasks: it leaves a turn the dead process left
  // open as it was, and the replay keeps that turn open across it.
  let at = history.length - 1
  while (at >= 0 && isManualCompaction(history[at]!)) at--
  const last = history[at]
  if (last === undefined || 'role' in last) return false
  switch (last.type) {
    case 'compaction':
      return true
    case 'error':
      if (last.compaction) return true
      return last.canRetry && (last.retry === true || last.usage !== undefined)
    case 'interrupt':
      // The marker of an interrupted compaction: the turn's own interrupt record was still to come.
      return last.compaction !== undefined
    default:
      return false
  }
}

/** A manual compaction's record, or the marker of one that saved nothing. */
function isManualCompaction(record: HistoryEvent): boolean {
  if ('role' in record) return false
  switch (record.type) {
    case 'compaction':
      return record.reason === 'manual'
    case 'error':
    case 'interrupt':
      return record.compaction?.reason === 'manual'
    default:
      return false
  }
}

/**
 * Whether the history ends inside a turn that is done: its response, and whatever of its calls
 * ran, are written, and no record a task writes between turns (a message, a `task_metadata`, an
 * `error` or `interrupt` between turns) came after. The process that wrote it died before its task
 * ended (asking for the next response, say). The replay closes that turn at whatever comes next,
 * and at the end of the history only because it ends there; so the next task closes it too, unless
 * it carries it on with calls left to settle (see `continuation.ts`). Manual compactions, which run
 * between tasks, and system messages are passed over; a turn awaiting its response is
 * `endsAwaitingResponse`'s.
 */
export function endsInDoneTurn(history: readonly HistoryEvent[]): boolean {
  for (let at = history.length - 1; at >= 0; at--) {
    const record = history[at]!
    if ('role' in record) {
      if (record.role === 'system') continue
      return record.role === 'assistant' || record.role === 'tool'
    }
    switch (record.type) {
      case 'task_metadata':
        return false
      case 'compaction':
        if (record.reason === 'manual') continue
        return false
      case 'error':
      case 'interrupt':
        if (record.compaction) {
          if (record.compaction.reason === 'manual') continue
          return false
        }
        // A retry's notice: the next turn, awaiting its response.
        if (
          record.type === 'error' &&
          record.canRetry &&
          (record.retry === true || record.usage !== undefined)
        )
          return false
        // A record in a turn of its own ended it (the task's end was still to come); one between
        // turns came after the turn ended; one without `turn` stayed in the turn before it.
        if (record.turn === 'own') return true
        if (record.turn === 'none') return false
        continue
      case 'approval_request':
        continue
      case 'approval_decision':
      case 'tool_progress':
        return true
      default: {
        const unknown: never = record
        return unknown
      }
    }
  }
  return false
}
