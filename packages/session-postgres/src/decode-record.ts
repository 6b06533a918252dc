import { decodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import { CorruptRecordError } from './errors.js'

/** Decodes a stored record; one that does not decode throws `CorruptRecordError` naming it. */
export function decodeStoredRecord(sessionId: string, seq: number, text: string): HistoryEvent {
  try {
    return decodeHistoryEvent(text)
  } catch (cause) {
    throw new CorruptRecordError(sessionId, seq, cause)
  }
}
