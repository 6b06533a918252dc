import { encodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import { SessionError } from '../errors.js'

/**
 * Encodes a batch as JSONL lines, validating every record before any is written, so a bad record
 * fails the whole append with nothing persisted. The error names the record's index and cause.
 */
export function encodeRecords(sessionId: string, events: readonly HistoryEvent[]): string[] {
  const lines: string[] = new Array(events.length)
  for (let i = 0; i < events.length; i++) {
    try {
      lines[i] = encodeHistoryEvent(events[i]!)
    } catch (cause) {
      const detail = cause instanceof Error ? cause.message : String(cause)
      throw new SessionError(
        'invalid_record',
        `record ${i} of ${events.length} appended to ${sessionId} is not a valid HistoryEvent: ${detail}`,
        { sessionId, cause },
      )
    }
  }
  return lines
}
