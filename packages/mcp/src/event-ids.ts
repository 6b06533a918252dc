const LF = 10
const CR = 13
/** `id:`: an event stream's field that names an event, what a client resumes the stream from. */
const ID_FIELD = [0x69, 0x64, 0x3a]
const SPACE = 0x20

/** Fed a `text/event-stream` body's bytes as they arrive, tells whether one named an event, and which. */
export interface EventIdWatch {
  feed(chunk: Uint8Array): void
  /** Whether a line `id: <something>` went by (an empty id resumes nothing). */
  seen(): boolean
  /** The value of the last whole `id:` line that named an event: what a client resumes from. */
  last(): string | undefined
}

/**
 * Watches an event stream for event ids, line by line across chunks, keeping only the start of
 * the current line (and the value of an id line). The MCP SDK resumes a request's stream that gave
 * one (a GET with `Last-Event-ID`), so its end does not mean its answer is lost.
 */
export function eventIdWatch(): EventIdWatch {
  let last: string | undefined
  // How much of `id:` the current line began with (3: all), then whether a space followed.
  let matched = 0
  let spaced = false
  let ruledOut = false
  /** The current id line's value so far. */
  let value: number[] = []
  const endLine = () => {
    if (value.length > 0) last = new TextDecoder().decode(new Uint8Array(value))
    matched = 0
    spaced = false
    ruledOut = false
    value = []
  }
  return {
    feed(chunk) {
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i]!
        if (byte === LF || byte === CR) {
          endLine()
        } else if (ruledOut) {
          // Another field, or data: nothing to see before the line ends.
        } else if (matched < ID_FIELD.length) {
          if (byte === ID_FIELD[matched]) matched++
          else ruledOut = true
        } else if (byte === SPACE && !spaced && value.length === 0) {
          // One space after the colon belongs to the syntax, not to the value.
          spaced = true
        } else {
          value.push(byte)
        }
      }
    },
    seen: () => last !== undefined || value.length > 0,
    last: () => last,
  }
}
