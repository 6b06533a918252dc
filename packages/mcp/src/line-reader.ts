import { lineCounter } from './message-size.js'

const CR = 13

/** What a line reader reports to. */
export interface LineReaderOptions {
  /** The longest line kept, in bytes, its LF not counted (`Infinity` for no limit). */
  readonly maxLineBytes: number
  /** Each line, decoded as UTF-8, without its LF or a CR before it. */
  readonly onLine: (line: string) => void
  /** Once, when a line grows past `maxLineBytes`: nothing more is read after it. */
  readonly onTooLarge: () => void
}

/**
 * Splits a byte stream into lines, as MCP's stdio transport frames messages. Returns the function
 * to feed it chunks with.
 *
 * A line's chunks are kept apart and joined once, when it ends: joining them as each arrives (as
 * the SDK's buffer does) copies a large message once per chunk. A chunk that makes a line too
 * long is refused before it is kept, so a server never ending a line cannot grow the host's memory.
 */
export function lineReader(options: LineReaderOptions): (chunk: Uint8Array) => void {
  // The counter's one scan of a chunk finds its line ends too; they are used only once the whole
  // chunk passed, so a chunk that makes a line too long is refused before any of it is read.
  let ends: number[] = []
  const tooLarge = lineCounter(options.maxLineBytes, (lf) => ends.push(lf))
  let parts: Uint8Array[] = []
  let stopped = false
  return (chunk) => {
    if (stopped) return
    ends = []
    if (tooLarge(chunk)) {
      stopped = true
      parts = []
      options.onTooLarge()
      return
    }
    let start = 0
    for (const lf of ends) {
      const end = chunk.subarray(start, lf)
      const line = parts.length === 0 ? asBuffer(end) : Buffer.concat([...parts, end])
      parts = []
      start = lf + 1
      const withoutCR = line.at(-1) === CR ? line.subarray(0, -1) : line
      options.onLine(withoutCR.toString('utf8'))
    }
    if (start < chunk.length) parts.push(chunk.subarray(start))
  }
}

/** The same bytes as a Buffer, not copied. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
