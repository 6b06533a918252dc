import type { HistoryEvent } from '@kode/protocol'

/**
 * Handles a history's records in order as they arrive in batches, where a record may have to wait
 * for later ones (an assistant message for its calls' results): `handle` takes the records in
 * order until one must wait and returns its index (their length when none does); the rest are
 * held and offered again, with the next batch, until the history ends. Shared by the incremental
 * replay and the incremental transcript.
 */
export class HeldRecords {
  #held: HistoryEvent[] = []

  constructor(private readonly handle: (records: readonly HistoryEvent[], ended: boolean) => number) {}

  /** Offers the next records, after those still held. */
  push(records: readonly HistoryEvent[]): void {
    if (this.#held.length === 0) {
      // The usual case: handled straight from the input, nothing copied.
      const stop = this.handle(records, false)
      for (let i = stop; i < records.length; i++) this.#held.push(records[i]!)
      return
    }
    for (const record of records) this.#held.push(record)
    const stop = this.handle(this.#held, false)
    if (stop > 0) this.#held = this.#held.slice(stop)
  }

  /** The history ended: handles every record still held, none waiting any longer. */
  end(): void {
    this.handle(this.#held, true)
    this.#held = []
  }
}
