import type { HistoryEvent } from '@kode/protocol'

/**
 * Whether the history ends inside a turn that awaits its response: its last record is one a task
 * writes in a turn before the model call answers (an automatic compaction, saved, failed or
 * interrupted, or a retry's notice). The process that wrote it had opened the turn and died before the response,
 * and the replay shows whatever comes next in that turn: a response carries it on, a message
 * closes it.
 */
export function endsAwaitingResponse(history: readonly HistoryEvent[]): boolean {
  const last = history.at(-1)
  if (last === undefined || 'role' in last) return false
  switch (last.type) {
    case 'compaction':
      return last.reason !== 'manual'
    case 'error':
      if (last.compaction) return last.compaction.reason !== 'manual'
      return last.canRetry && (last.retry === true || last.usage !== undefined)
    case 'interrupt':
      // The marker of an interrupted compaction: the turn's own interrupt record was still to come.
      return last.compaction !== undefined && last.compaction.reason !== 'manual'
    default:
      return false
  }
}
