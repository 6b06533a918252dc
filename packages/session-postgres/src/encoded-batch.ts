import type { HistoryEvent } from '@kode/protocol'
import { encodeRecords, SessionError } from '@kode/session'

/**
 * The most one statement's parameters may hold: Postgres refuses a message over 1 GiB, and the
 * batch shares its message with the statement's other, small parameters.
 */
const MAX_BATCH_BYTES = 2 ** 30 - 2 ** 20

/** An append's records as the append statements take them: one JSON array of their lines. */
export interface EncodedBatch {
  readonly count: number
  readonly json: string
}

/**
 * Encodes the records of an append, checking each as a `HistoryEvent` and against
 * `maxRecordBytes`. The lines go as one JSON array text rather than a Postgres array: pg escapes
 * an array's elements with regular expressions, which took seconds and hundreds of megabytes for
 * a few records full of quotes, and ran a host out of memory on a batch of a few hundred
 * megabytes; `JSON.stringify` escapes in one native pass, and Postgres reads it back exactly.
 */
export function encodeBatch(
  sessionId: string,
  events: readonly HistoryEvent[],
  maxRecordBytes: number,
): EncodedBatch {
  const lines = encodeRecords(sessionId, events, maxRecordBytes)
  let json: string
  try {
    json = JSON.stringify(lines)
  } catch (cause) {
    // Over the longest string V8 makes (about 512 MiB characters).
    throw batchTooLarge(sessionId, lines, cause)
  }
  // A UTF-16 unit takes at most 3 bytes of UTF-8: only a long text needs counting.
  if (json.length * 3 > MAX_BATCH_BYTES && Buffer.byteLength(json) > MAX_BATCH_BYTES) {
    throw batchTooLarge(sessionId, lines)
  }
  return { count: lines.length, json }
}

function batchTooLarge(sessionId: string, lines: readonly string[], cause?: unknown): SessionError {
  const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0)
  return new SessionError(
    'record_too_large',
    `the ${lines.length} records appended to ${sessionId} are ${bytes} bytes encoded together, more than one append can carry: nothing was written; append them in smaller batches`,
    { sessionId, ...(cause !== undefined ? { cause } : {}) },
  )
}
