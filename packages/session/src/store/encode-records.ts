import { encodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import { SessionError } from '../errors.js'

/**
 * Encodes a batch as JSONL lines, validating every record before any is written, so a bad record
 * fails the whole append with nothing persisted. The error names the record's index and cause.
 * With `maxRecordBytes`, a line longer than that in UTF-8 fails the batch with `record_too_large`.
 */
export function encodeRecords(
  sessionId: string,
  events: readonly HistoryEvent[],
  maxRecordBytes = Number.POSITIVE_INFINITY,
): string[] {
  const lines: string[] = new Array(events.length)
  for (let i = 0; i < events.length; i++) {
    let line: string
    try {
      line = encodeHistoryEvent(events[i]!)
    } catch (cause) {
      const detail = cause instanceof Error ? cause.message : String(cause)
      throw new SessionError(
        'invalid_record',
        `record ${i} of ${events.length} appended to ${sessionId} is not a valid HistoryEvent: ${detail}`,
        { sessionId, cause },
      )
    }
    const bytes = lineBytesOver(line, maxRecordBytes)
    if (bytes > 0) {
      throw new SessionError(
        'record_too_large',
        `record ${i} of ${events.length} appended to ${sessionId} is ${bytes} bytes encoded, over this store's limit of ${maxRecordBytes} bytes (maxRecordBytes): nothing was written; keep large payloads such as images out of the history, or raise the limit`,
        { sessionId },
      )
    }
    lines[i] = line
  }
  return lines
}

/**
 * The size of `record`'s line in UTF-8 (what a store measures against its `maxRecordBytes`, and
 * `encodeRecords` refuses) when it is over `maxRecordBytes`, else 0; always 0 without a limit.
 * Throws `encodeHistoryEvent`'s `CodecError` for a record that is not a valid `HistoryEvent`.
 */
export function recordBytesOver(record: HistoryEvent, maxRecordBytes: number | undefined): number {
  if (maxRecordBytes === undefined) return 0
  return lineBytesOver(encodeHistoryEvent(record), maxRecordBytes)
}

/** The most characters a JSON number takes (`-1.7976931348623157e+308`), as a `createdAt` may. */
const MAX_NUMBER_CHARS = 24

/**
 * `recordBytesOver` for a record whose `createdAt` is not known yet (its clock has not been read):
 * measured with room for the longest timestamp a clock can give, so a record this lets through is
 * never refused by the store whatever time it is written at (one within a few bytes of the limit
 * may be refused here). Pass the record with any `createdAt`; over the limit, the size given
 * counts the longest timestamp.
 */
export function unstampedRecordBytesOver(record: HistoryEvent, maxRecordBytes: number | undefined): number {
  if (maxRecordBytes === undefined) return 0
  // `0` takes one character: the rest of the longest number is the room kept.
  const room = MAX_NUMBER_CHARS - 1
  const over = recordBytesOver({ ...record, createdAt: 0 }, maxRecordBytes - room)
  return over === 0 ? 0 : over + room
}

/** The UTF-8 size of `line` when over `maxRecordBytes`, else 0. */
function lineBytesOver(line: string, maxRecordBytes: number): number {
  // A UTF-16 unit takes at most 3 bytes of UTF-8: only a long line needs counting.
  if (line.length * 3 <= maxRecordBytes) return 0
  const bytes = utf8Length(line)
  return bytes > maxRecordBytes ? bytes : 0
}

/** The length of `text` in UTF-8 (a lone surrogate counts as the 3 bytes of U+FFFD, as encoders write it). */
function utf8Length(text: string): number {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0x80) continue
    if (unit < 0x800) bytes += 1
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      // A pair: 4 bytes for its 2 units.
      bytes += 2
      i++
    } else bytes += 2
  }
  return bytes
}

/** Past the end `charCodeAt` gives NaN, which is none. */
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff
