import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser'
import { Fifo } from './fifo.js'

const LF = 10
const CR = 13

/**
 * The most characters one event may hold, its unfinished line included: far above any real one (a
 * whole image as base64 included), low enough that a server streaming one endless line fails with
 * an error instead of filling the memory until the response deadline.
 */
export const MAX_EVENT_CHARS = 32 * 1024 * 1024

/** One server-sent event: the `event:` name (if any) and the joined `data:` lines. */
export type SseEvent = EventSourceMessage

/**
 * Bytes in, events out. UTF-8 characters, lines and events may be split anywhere across
 * `feed` calls. Events queue up until taken with `next`, so a caller can map them one at a time
 * and stop between any two (comments such as `: OPENROUTER PROCESSING` are dropped here; events
 * whose data is blank are skipped where their mapping fails, see {@link isBlankEvent}).
 */
export class SseDecoder {
  private readonly decoder = new TextDecoder()
  private readonly parser: EventSourceParser
  /**
   * The decoded events not taken yet. The transport takes from it in place (see `Fifo`); an
   * event's data is a slice of its whole network chunk, so a taken slot is cleared, or stale slots
   * would keep old chunks alive through garbage collections.
   */
  readonly events = new Fifo<SseEvent>()
  // A line feed held back from the end of the last chunk (see `feed`).
  private heldLineFeed = false
  /** An event grew past {@link MAX_EVENT_CHARS}: the parser stopped, and nothing more is decoded. */
  tooLarge = false
  // The text fed last ended with a CR: the parser waits to see whether an LF follows (see `end`).
  private trailingCR = false

  constructor() {
    this.parser = createParser({
      onEvent: (event) => {
        const events = this.events
        events.slots[events.size++] = event
      },
      onError: (error) => {
        // Other parse errors (an unreadable `retry:` field, an unknown field) are ignored, as the
        // event-stream rules say.
        if (error.type === 'max-buffer-size-exceeded') this.tooLarge = true
      },
      maxBufferSize: MAX_EVENT_CHARS,
    })
  }

  /** Decodes one chunk of the body; complete events become available to `next`. */
  feed(bytes: Uint8Array): void {
    if (this.tooLarge) return
    let text = this.decoder.decode(bytes, { stream: true })
    if (this.heldLineFeed) {
      text = `\n${text}`
      this.heldLineFeed = false
    }
    // A chunk ending right after a non-empty line's LF makes the parser look one character past
    // its end for the blank line that ends the event. In optimized code that read is out of
    // bounds: the parser's main loop deoptimizes and is compiled again, about 10 ms of compile
    // per stream. Holding that LF back until the next chunk delays no event, since only a blank
    // line completes one.
    const last = text.length - 1
    if (last > 0 && text.charCodeAt(last) === LF) {
      const before = text.charCodeAt(last - 1)
      if (before !== LF && before !== CR) {
        this.heldLineFeed = true
        text = text.slice(0, last)
      }
    }
    if (text.length > 0) this.trailingCR = text.charCodeAt(text.length - 1) === CR
    this.parser.feed(text)
  }

  /**
   * The body ended. A line ended by a lone CR (SSE allows CR, LF or CRLF) is complete only once
   * no LF can follow it: such a line is completed now, and the event it ends, if it ends one,
   * becomes available to `next`. True when a line was completed (there may be events to take).
   */
  end(): boolean {
    if (!this.trailingCR) return false
    this.trailingCR = false
    this.parser.feed('\n')
    return true
  }

  /** The oldest event not taken yet. */
  next(): SseEvent | undefined {
    return this.events.take()
  }
}

/**
 * Whether an event holds no data (`data:` alone, or only spaces): a keep-alive some proxies and
 * servers send. No wire's payload is blank, so an event a mapper cannot read is skipped when it is
 * one; checked only then, it costs the events that map nothing.
 */
export function isBlankEvent(event: SseEvent): boolean {
  return event.data.trim() === ''
}
