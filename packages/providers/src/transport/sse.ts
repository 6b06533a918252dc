import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser'

/** One server-sent event: the `event:` name (if any) and the joined `data:` lines. */
export type SseEvent = EventSourceMessage

/**
 * Bytes in, events out. UTF-8 characters, lines and events may be split anywhere across
 * `feed` calls. Events queue up until taken with `next`, so a caller can map them one at a time
 * and stop between any two (comments such as `: OPENROUTER PROCESSING` are dropped here).
 */
export class SseDecoder {
  private readonly decoder = new TextDecoder()
  private readonly parser: EventSourceParser
  // A reusable FIFO, like the accumulator's: no shrinking and regrowing per event.
  private readonly queue: (SseEvent | undefined)[] = []
  private head = 0
  private size = 0

  constructor() {
    this.parser = createParser({
      onEvent: (event) => {
        this.queue[this.size++] = event
      },
    })
  }

  /** Decodes one chunk of the body; complete events become available to `next`. */
  feed(bytes: Uint8Array): void {
    this.parser.feed(this.decoder.decode(bytes, { stream: true }))
  }

  /** The oldest event not taken yet. */
  next(): SseEvent | undefined {
    if (this.head < this.size) {
      const event = this.queue[this.head]
      // Let go of what was handed out: an event's data is a slice of its whole network chunk, and
      // stale slots kept old chunks alive through garbage collections (a larger heap, more GC work).
      this.queue[this.head++] = undefined
      return event
    }
    this.head = 0
    this.size = 0
    return undefined
  }
}
