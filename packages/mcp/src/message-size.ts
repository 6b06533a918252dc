/**
 * Counters of the message a server is in the middle of sending, fed the bytes as they arrive.
 * Each returns `true` once that message has grown past `limit` bytes: a message is buffered
 * whole before it is parsed, so a server that never ends one (a line without its newline, an
 * endless event) would otherwise grow the host's memory without bound.
 */
export type MessageCounter = (chunk: Uint8Array) => boolean

const LF = 10
const CR = 13

/**
 * A stdio stream: one message per line, ended by LF (as the SDK splits them). `onLineEnd` is told
 * the index in the chunk of each LF passed before the verdict, so a reader need not scan the
 * chunk for them a second time.
 */
export function lineCounter(limit: number, onLineEnd?: (lf: number) => void): MessageCounter {
  let line = 0
  return (chunk) => {
    let start = 0
    for (let lf = chunk.indexOf(LF); lf !== -1; lf = chunk.indexOf(LF, start)) {
      if (line + lf - start > limit) return true
      onLineEnd?.(lf)
      line = 0
      start = lf + 1
    }
    line += chunk.length - start
    return line > limit
  }
}

/**
 * A `text/event-stream` body: one message per event, ended by a blank line. Lines end with CRLF,
 * LF or CR, as the format allows.
 */
export function eventCounter(limit: number): MessageCounter {
  let event = 0
  let line = 0
  let afterCR = false
  return (chunk) => {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]
      if (byte === LF && afterCR) {
        afterCR = false
        continue
      }
      if (byte === LF || byte === CR) {
        event = line === 0 ? 0 : event + line + 1
        line = 0
        afterCR = byte === CR
        continue
      }
      afterCR = false
      line++
      if (event + line > limit) return true
    }
    return false
  }
}

/** Any other body (a JSON answer): the whole body is one message. */
export function bodyCounter(limit: number): MessageCounter {
  let size = 0
  return (chunk) => {
    size += chunk.length
    return size > limit
  }
}
