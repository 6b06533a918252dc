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
