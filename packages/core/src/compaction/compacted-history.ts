import type { CompactionRecord, HistoryEvent, UserMessage } from '@kode/protocol'

/** How the summary is introduced to the model, before the summary text. */
export const SUMMARY_PREFIX =
  'The earlier part of this conversation was summarised to fit the context window. The summary:\n\n'

/** The user message a compaction's summary is sent as; its id is the record's. */
export function summaryMessage(record: CompactionRecord): UserMessage {
  return {
    role: 'user',
    id: record.id,
    createdAt: record.createdAt,
    parts: [{ type: 'text', text: SUMMARY_PREFIX + record.summary }],
  }
}

/** A history as the model sees it after its latest compaction, and where that compaction left it. */
export interface CompactedHistory {
  /** The latest system prompt, the summary message, the kept records, then every later record. */
  records: HistoryEvent[]
  /** The latest compaction record, if any. */
  compaction: CompactionRecord | undefined
  /** Index in `records` of the first record written after the compaction (0 without one). */
  freshFrom: number
}

/**
 * The records the model sees of `history`: all of them until a `compaction` record exists; from
 * then on the latest system prompt before the kept part, the latest summary as a user message, the
 * records from the compaction's `firstKeptId` on (compaction records excluded). A
 * compaction whose `firstKeptId` is its own id (or unknown) keeps nothing before it. The history
 * itself is never changed: replay and export still show every record.
 */
export function compactedHistory(history: readonly HistoryEvent[]): CompactedHistory {
  let at = history.length - 1
  while (at >= 0 && !isCompaction(history[at]!)) at--
  if (at < 0) return { records: [...history], compaction: undefined, freshFrom: 0 }
  const compaction = history[at] as CompactionRecord
  let keptFrom = at
  for (let i = at - 1; i >= 0; i--) {
    if (history[i]!.id === compaction.firstKeptId) {
      keptFrom = i
      break
    }
  }
  const records: HistoryEvent[] = []
  for (let i = keptFrom - 1; i >= 0; i--) {
    const record = history[i]!
    if ('role' in record && record.role === 'system') {
      records.push(record)
      break
    }
  }
  records.push(summaryMessage(compaction))
  // An earlier compaction inside the kept part is no part of the view (its summary is in the
  // latest one's): kept, it would pass for the latest to whoever reads the view again.
  for (let i = keptFrom; i < at; i++) if (!isCompaction(history[i]!)) records.push(history[i]!)
  const freshFrom = records.length
  for (let i = at + 1; i < history.length; i++) records.push(history[i]!)
  return { records, compaction, freshFrom }
}

function isCompaction(record: HistoryEvent): record is CompactionRecord {
  return !('role' in record) && record.type === 'compaction'
}
