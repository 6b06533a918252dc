/**
 * A first-in, first-out queue that reuses its slots: they are overwritten rather than the array
 * shrunk and regrown per value, and a taken slot is cleared so its value can be collected young.
 *
 * The fields are public because the transport takes from its two queues (decoded events, stream
 * items) in place on the path every token runs (see `ResponseStream.next`): there, a method call
 * per take is code the JIT runs cold and compiles on its own, which showed in the cost of a
 * stream's first thousands of items. Everything else uses the methods.
 */
export class Fifo<T> {
  readonly slots: (T | undefined)[] = []
  /** The next slot to take. */
  head = 0
  /** The slots in use: `head` up to here holds values not taken yet. */
  size = 0

  push(value: T): void {
    this.slots[this.size++] = value
  }

  /** The oldest value not taken yet; `undefined` when there is none (the slots are reused then). */
  take(): T | undefined {
    if (this.head < this.size) {
      const value = this.slots[this.head]
      this.slots[this.head++] = undefined
      return value
    }
    this.head = 0
    this.size = 0
    return undefined
  }

  /** Drops every value not taken yet. */
  clear(): void {
    this.slots.fill(undefined, this.head, this.size)
    this.head = 0
    this.size = 0
  }
}
