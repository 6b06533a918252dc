import { encodeHistoryEvent, type HistoryEvent } from '@kode/protocol'

/**
 * The size of `record`'s line in UTF-8 (as a store measures it against its `maxRecordBytes`) when
 * it is over `maxRecordBytes`, else 0; always 0 without a limit. A line short enough that even 3
 * bytes per UTF-16 unit fit is not counted.
 */
export function bytesOverLimit(record: HistoryEvent, maxRecordBytes: number | undefined): number {
  if (maxRecordBytes === undefined) return 0
  const line = encodeHistoryEvent(record)
  if (line.length * 3 <= maxRecordBytes) return 0
  const bytes = new TextEncoder().encode(line).byteLength
  return bytes > maxRecordBytes ? bytes : 0
}
