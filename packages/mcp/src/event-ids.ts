const LF = 10
const CR = 13
const COLON = 0x3a
const SPACE = 0x20
const NUL = 0
/** UTF-8's byte order mark, which the decoder in front of the SDK's parser drops at a stream's start. */
const BOM = [0xef, 0xbb, 0xbf]
const ID = 'id'
const DATA = 'data'
/** Longer field names are neither `id` nor `data`: no need to keep more of them. */
const NAME_MAX = DATA.length + 1

/** Fed a `text/event-stream` body's bytes as they arrive, tells which event id a client resumes it from. */
export interface EventIdWatch {
  feed(chunk: Uint8Array): void
  /**
   * The id the MCP SDK resumes the stream from (a GET with `Last-Event-ID`), as it reads the
   * stream so far: that of the last event dispatched (one with a data field, ended by a blank
   * line) whose id is not empty. `undefined`: none, and the SDK does not resume the stream.
   */
  last(): string | undefined
}

/**
 * Watches an event stream for the event id the MCP SDK resumes it from, by the rules of the
 * parser the SDK reads it with (`eventsource-parser`): an id belongs to its event only; an event
 * without a data field is never dispatched, so its id names nothing; an id holding NUL is
 * ignored; CR, LF and CRLF all end a line. Keeps only the current line's field name and an id's
 * value, so a large event costs nothing more. The SDK resumes a request's stream that gave such an
 * id, so its end does not mean its answer is lost.
 */
export function eventIdWatch(): EventIdWatch {
  let last: string | undefined
  // The current event: its id (the last id line's value) and whether it has a data field.
  let eventId: string | undefined
  let hasData = false
  // The current line: whether it has any byte, its field name (up to NAME_MAX bytes), once the
  // colon went by the field it names, and an id line's value so far (and how many bytes of it came).
  let empty = true
  let name: number[] = []
  let field: string | undefined
  let value: number[] = []
  let valueBytes = 0
  let afterCR = false
  /** Bytes of the BOM matched at the stream's start; -1 once past it. */
  let bom = 0
  const endLine = () => {
    if (empty) {
      // A blank line dispatches the event, if it has data; its id goes with it either way.
      if (hasData && eventId) last = eventId
      eventId = undefined
      hasData = false
    } else {
      // A line without a colon is a field name with an empty value.
      const named = field ?? String.fromCharCode(...name)
      if (named === DATA) hasData = true
      else if (named === ID && !value.includes(NUL)) eventId = new TextDecoder().decode(new Uint8Array(value))
    }
    empty = true
    name = []
    field = undefined
    value = []
    valueBytes = 0
  }
  const take = (byte: number) => {
    if (byte === LF && afterCR) {
      // The LF of a CRLF: the line already ended at its CR.
      afterCR = false
      return
    }
    afterCR = byte === CR
    if (byte === LF || byte === CR) return endLine()
    empty = false
    if (field === undefined) {
      if (byte === COLON) field = String.fromCharCode(...name)
      else if (name.length < NAME_MAX) name.push(byte)
    } else if (field === ID) {
      // One space after the colon belongs to the syntax, not to the value.
      if (!(byte === SPACE && valueBytes === 0)) value.push(byte)
      valueBytes++
    }
  }
  return {
    feed(chunk) {
      let i = 0
      // A BOM is dropped at the very start (split across chunks too); anything else ends the check.
      while (bom >= 0 && i < chunk.length) {
        if (chunk[i] !== BOM[bom]) {
          // Part of a BOM that was not one: those bytes were the stream's own.
          for (const byte of BOM.slice(0, bom)) take(byte)
          bom = -1
        } else if (++bom === BOM.length) {
          bom = -1
          i++
        } else {
          i++
        }
      }
      for (; i < chunk.length; i++) take(chunk[i]!)
    },
    last: () => last,
  }
}

/**
 * An event id as the `Last-Event-ID` header of the GET resuming from it reads: `Headers` drops
 * the spaces and tabs around a value (an id may keep a second space after `id:`).
 */
export function headerValue(eventId: string): string {
  return eventId.replace(/^[ \t]+|[ \t]+$/g, '')
}

/** Tab, then the range of space to `~` (visible ASCII), then the range of bytes 0x80 to 0xFF. */
const HEADER_CHARS: readonly (readonly [number, number])[] = [
  [0x09, 0x09],
  [0x20, 0x7e],
  [0x80, 0xff],
]

/**
 * Whether a client can resume a stream from `eventId`: the `Last-Event-ID` header carrying it
 * must be a valid header value (RFC 9110's field value: tabs, spaces, visible ASCII, bytes 0x80 to
 * 0xFF). The MCP SDK tries no other: with a character above U+00FF, `Headers` throws before any
 * request; with a control character, `fetch` rejects it unsent. Either way every attempt fails
 * without reaching the server, and the stream is never resumed.
 */
export function canResumeFrom(eventId: string): boolean {
  for (const char of headerValue(eventId)) {
    const code = char.codePointAt(0)!
    if (!HEADER_CHARS.some(([low, high]) => code >= low && code <= high)) return false
  }
  return true
}
