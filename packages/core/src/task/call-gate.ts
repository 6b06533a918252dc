/**
 * Admission of a batch's calls: up to `limit` concurrent ones, or one exclusive call (a tool with
 * `concurrent: false`) alone. The batch starts calls in order, waiting on `changed()` until the
 * next one `admits`.
 */
export class Gate {
  /** Set when the batch failed: nothing more starts. */
  halted = false
  readonly #limit: number
  #running = 0
  #exclusive = false
  #wake: (() => void) | undefined

  constructor(limit: number) {
    this.#limit = limit
  }

  admits(exclusive: boolean): boolean {
    return exclusive ? this.#running === 0 : !this.#exclusive && this.#running < this.#limit
  }

  enter(exclusive: boolean): void {
    this.#running++
    if (exclusive) this.#exclusive = true
  }

  leave(exclusive: boolean): void {
    this.#running--
    if (exclusive) this.#exclusive = false
    this.wake()
  }

  /** Resolves at the next `leave` or `wake`. */
  changed(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve
    })
  }

  halt(): void {
    this.halted = true
    this.wake()
  }

  wake(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}
