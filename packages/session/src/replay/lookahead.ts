import type { HistoryEvent } from '@kode/protocol'
import { linkedSessions } from './linked-sessions.js'

/**
 * Adds to `links` the calls `records` answer, each with the sessions its first result links (a
 * later result of the same call changes nothing), so whether a sub-agent's request is shown
 * inline is decided by the first result alone: the same however the history is split.
 */
export function addResultLinks(
  records: readonly HistoryEvent[],
  links: Map<string, readonly string[]>,
): void {
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!
    if ('role' in record && record.role === 'tool' && !links.has(record.toolCallId)) {
      links.set(record.toolCallId, linkedSessions(record))
    }
  }
}

/**
 * Whether the tool result at `index` is the last of its turn: true unless another tool result
 * follows before the turn can end (records in between are skipped); `undefined` while the records
 * so far do not tell.
 */
export function isLastInTurn(records: readonly HistoryEvent[], index: number): boolean | undefined {
  for (let i = index + 1; i < records.length; i++) {
    const next = records[i]!
    if ('role' in next) return next.role !== 'tool'
    if (next.type === 'task_metadata') return true
  }
  return undefined
}
