import { isAscii, isUtf8 } from 'node:buffer'
import type { FileHandle } from 'node:fs/promises'
import { CodecError, decodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import { CorruptHistoryError } from '../../errors.js'
import { openNoFollow, READ } from './no-follow.js'

// Large enough that per-read overhead vanishes, small enough that a huge file is never one string.
const CHUNK_BYTES = 1 << 20
// A read chunk is decoded to strings in pieces of about this many bytes. V8 puts a string larger
// than about 128 kB (64k characters of UTF-16) in its large-object space, where every one costs
// freshly mapped pages and its own collection: decoding 1 MB pieces spent ~7x the CPU of 32 kB
// pieces on page faults (docs/sessions.md, Benchmarks).
const DECODE_BYTES = 32 * 1024
const NEWLINE = 0x0a

/** A history file's records, plus the cut-off last line if there was one (it was not decoded). */
export interface HistoryFileContents {
  events: HistoryEvent[]
  torn?: TornTail
}

/** The cut-off last line of a history file: its 1-based line number and its length in bytes. */
export interface TornTail {
  line: number
  bytes: number
}

/** Options of `readHistoryBatches`. */
export interface HistoryBatchOptions {
  /** Records per batch at most; `Infinity` yields the whole file as one batch. */
  batchSize: number
  /** Checked before every read from the file and every batch: aborting throws its reason. */
  signal?: AbortSignal | undefined
  /** Told about a cut-off last line, after the last batch. */
  onTorn?: ((torn: TornTail) => void) | undefined
  /** Where the records end: bytes past it (a failed append's) are not read. Default: the end. */
  limit?: number | undefined
}

/**
 * Reads and decodes a history file, returning every record (see `readHistoryBatches`). Returns no
 * events for a missing file.
 */
export async function readHistoryFile(
  file: string,
  sessionId: string,
  limit?: number,
): Promise<HistoryFileContents> {
  let torn: TornTail | undefined
  let events: HistoryEvent[] = []
  const batches = readHistoryBatches(file, sessionId, {
    batchSize: Number.POSITIVE_INFINITY,
    limit,
    onTorn: (tail) => {
      torn = tail
    },
  })
  // One batch: the whole file.
  for await (const batch of batches) events = batch
  return torn ? { events, torn } : { events }
}

/**
 * Reads and decodes a history file chunk by chunk, handing out the records in batches of at most
 * `batchSize` as they are decoded, so memory tracks what the caller keeps and not the file size
 * twice over. A file that is a symbolic link is refused (`symlink_refused`). A last line without
 * its newline is a write cut short by a crash (or one in progress): it is reported to `onTorn` and
 * not decoded. Any other undecodable line (not JSON, not a record, not UTF-8) throws
 * `CorruptHistoryError` naming the file and the 1-based line number, after the batches before it.
 * Yields nothing for a missing file. The file is closed when the iteration ends, whichever way.
 */
export async function* readHistoryBatches(
  file: string,
  sessionId: string,
  options: HistoryBatchOptions,
): AsyncGenerator<HistoryEvent[]> {
  const { batchSize, signal } = options
  signal?.throwIfAborted()
  let handle: FileHandle
  try {
    handle = await openNoFollow(file, READ, sessionId)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  let events: HistoryEvent[] = []
  let line = 0
  // `buffer[0, kept)` holds the start of a line whose end has not been read yet; it starts at
  // `position - kept` in the file.
  let buffer: Buffer = Buffer.allocUnsafe(CHUNK_BYTES)
  let kept = 0
  let position = 0
  const limit = options.limit ?? Number.POSITIVE_INFINITY
  let reread = false
  try {
    chunks: for (;;) {
      signal?.throwIfAborted()
      if (kept === buffer.length) buffer = grow(buffer)
      const want = Math.min(buffer.length - kept, limit - position)
      const { bytesRead } = want === 0 ? { bytesRead: 0 } : await handle.read(buffer, kept, want, position)
      if (bytesRead === 0) break
      position += bytesRead
      const filled = kept + bytesRead
      const end = buffer.lastIndexOf(NEWLINE, filled - 1)
      if (end === -1) {
        kept = filled
        continue
      }
      for (let from = 0; from <= end; ) {
        let to = end
        if (end - from > DECODE_BYTES) {
          to = buffer.lastIndexOf(NEWLINE, from + DECODE_BYTES)
          // A single line longer than a piece is decoded whole.
          if (to < from) to = buffer.indexOf(NEWLINE, from + DECODE_BYTES)
        }
        const { texts, notUtf8 } = pieceLines(buffer, from, to)
        for (let next = 0; next < texts.length; ) {
          let stop: number
          try {
            stop = decodeLines(texts, next, events, batchSize, { sessionId, file, line, notUtf8 })
          } catch (error) {
            if (reread || !(error instanceof CorruptHistoryError)) throw error
            // A line that read as corrupt may be two writes in one: the start of a torn last line,
            // then what a new writer wrote after cutting it off (its first step after a crash)
            // while this read was between two chunks. The file is read again from that line,
            // once; the records before it stand.
            reread = true
            const bad = next + (error.line - 1 - line)
            position += lineStart(buffer, from, bad) - filled
            line = error.line - 1
            kept = 0
            continue chunks
          }
          line += stop - next
          next = stop
          if (events.length >= batchSize) {
            signal?.throwIfAborted()
            yield events
            events = []
          }
        }
        from = to + 1
      }
      kept = buffer.copy(buffer, 0, end + 1, filled)
    }
  } finally {
    await handle.close()
  }
  // A last line without its newline that is whole (a JSON object) was written or edited
  // elsewhere, not cut short (see `isWholeLine`): it is decoded like the others, and fails the
  // read as they do when it is no record.
  const whole = kept > 0 && isWholeLine(buffer.subarray(0, kept))
  if (whole) decodeLines([buffer.toString('utf8', 0, kept)], 0, events, batchSize, { sessionId, file, line })
  if (events.length > 0 || batchSize === Number.POSITIVE_INFINITY) {
    signal?.throwIfAborted()
    yield events
  }
  if (kept > 0 && !whole) options.onTorn?.({ line: line + 1, bytes: kept })
}

const CLOSE_BRACE = 0x7d
// JSON's white space other than the newline: an editor may leave it after the last record.
const TRAILING_SPACE = new Set([0x20, 0x09, 0x0d])

/** Whether `bytes` (the end of a line, or all of it) end a JSON object, white space aside. */
function closesObject(bytes: Buffer): boolean {
  let end = bytes.length - 1
  while (end >= 0 && TRAILING_SPACE.has(bytes[end]!)) end--
  return end >= 0 && bytes[end] === CLOSE_BRACE
}

/**
 * Whether a file's bytes after its last newline are a whole line: a JSON object, as every line the
 * store writes is. A file written or edited elsewhere (lines joined with newlines, an editor that
 * drops the final one) can end so. A write cut short never leaves one, since no proper prefix of
 * a JSON object is one: those bytes are a torn line. Whether the object is a record this version
 * reads is the decoder's to say, as for any other line.
 */
function isWholeLine(bytes: Buffer): boolean {
  if (!closesObject(bytes) || !isUtf8(bytes)) return false
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value)
  } catch {
    return false
  }
}

/**
 * Whether the bytes of an open file of `size` bytes past its last newline (at `complete`, found
 * when not given) are a whole line without its newline (see `isWholeLine`). A torn line is read
 * whole only when it happens to end as an object does.
 */
export async function endsWithWholeLine(
  handle: FileHandle,
  size: number,
  complete?: number,
): Promise<boolean> {
  if (size === 0) return false
  const end = Buffer.allocUnsafe(Math.min(size, 16))
  const { bytesRead } = await handle.read(end, 0, end.length, size - end.length)
  if (!closesObject(end.subarray(0, bytesRead))) return false
  const from = complete ?? (await completeLength(handle, size))
  if (from >= size) return false
  const tail = Buffer.allocUnsafe(size - from)
  for (let filled = 0; filled < tail.length; ) {
    const read = await handle.read(tail, filled, tail.length - filled, from + filled)
    if (read.bytesRead === 0) return false
    filled += read.bytesRead
  }
  return isWholeLine(tail)
}

/** A piece's lines as text, and which of them (by index) are not valid UTF-8. */
interface PieceLines {
  texts: string[]
  notUtf8?: ReadonlySet<number> | undefined
}

/**
 * Decodes `buffer[from, to)` (whole lines) into its lines. One string per piece, split into lines:
 * far cheaper than a string per line from the buffer. ASCII-only pieces take the much faster
 * latin1 decoder (same result for ASCII). The store writes only UTF-8, so a piece that is not is
 * damaged: it is split by bytes instead, to name the lines that are not (their bytes would read as
 * U+FFFD, a record nobody wrote).
 */
function pieceLines(buffer: Buffer, from: number, to: number): PieceLines {
  const piece = buffer.subarray(from, to)
  if (isAscii(piece)) return { texts: buffer.toString('latin1', from, to).split('\n') }
  if (isUtf8(piece)) return { texts: buffer.toString('utf8', from, to).split('\n') }
  const texts: string[] = []
  const notUtf8 = new Set<number>()
  for (let start = 0; start <= piece.length; ) {
    let end = piece.indexOf(NEWLINE, start)
    if (end === -1) end = piece.length
    const line = piece.subarray(start, end)
    if (!isUtf8(line)) notUtf8.add(texts.length)
    texts.push(line.toString('utf8'))
    start = end + 1
  }
  return { texts, notUtf8 }
}

/** Where the lines given to `decodeLines` come from: the file, and the lines before them. */
interface LinesOrigin {
  sessionId: string
  file: string
  /** How many lines of the file come before `lines[from]`. */
  line: number
  /** Indexes of `lines` whose bytes are not valid UTF-8. */
  notUtf8?: ReadonlySet<number> | undefined
}

/**
 * Decodes `lines` from index `from` into `into` until it holds `limit` records or the lines end;
 * returns the index of the first line not decoded. An undecodable line throws
 * `CorruptHistoryError` with its 1-based line number in the file. The per-line loop is kept out of
 * the async generator: V8 would compile the whole generator (on-stack, while it runs) to optimize
 * the loop, several times the work of compiling this function, and that work is most of what
 * reading a short history costs beyond the reading.
 */
function decodeLines(
  lines: readonly string[],
  from: number,
  into: HistoryEvent[],
  limit: number,
  origin: LinesOrigin,
): number {
  let i = from
  for (; i < lines.length && into.length < limit; i++) {
    try {
      if (origin.notUtf8?.has(i)) {
        throw new CodecError('', 'UTF-8 text', { detail: 'the line holds bytes that are not valid UTF-8' })
      }
      into.push(decodeHistoryEvent(lines[i]!))
    } catch (cause) {
      throw new CorruptHistoryError(origin.sessionId, origin.file, origin.line + (i - from) + 1, cause)
    }
  }
  return i
}

/** Where in `buffer` the line `index` lines after the one starting at `from` starts. */
function lineStart(buffer: Buffer, from: number, index: number): number {
  let start = from
  for (let i = 0; i < index; i++) start = buffer.indexOf(NEWLINE, start) + 1
  return start
}

/** A buffer twice as large holding the same bytes, for a line longer than the buffer. */
function grow(buffer: Buffer): Buffer {
  const larger = Buffer.allocUnsafe(buffer.length * 2)
  buffer.copy(larger)
  return larger
}

/** Counts the complete lines (newline bytes) in `[from, to)` of an open file. */
export async function countLines(handle: FileHandle, from: number, to: number): Promise<number> {
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(1, to - from)))
  let count = 0
  for (let position = from; position < to; ) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, to - position), position)
    if (bytesRead === 0) break
    for (let i = chunk.indexOf(NEWLINE, 0); i !== -1 && i < bytesRead; i = chunk.indexOf(NEWLINE, i + 1)) {
      count++
    }
    position += bytesRead
  }
  return count
}

/**
 * The length the file should have: just past its last newline. Anything after it is a torn
 * write. Reads backwards from the end, so a healthy file costs one small read.
 */
export async function completeLength(handle: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, Math.max(1, size)))
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - chunk.length)
    const { bytesRead } = await handle.read(chunk, 0, end - start, start)
    const last = chunk.subarray(0, bytesRead).lastIndexOf(NEWLINE)
    if (last !== -1) return start + last + 1
    end = start
  }
  return 0
}
