/**
 * Short-lived abort listeners on one long-lived signal (the task's), through a single listener
 * added to it when the first one comes. Each batch of tool calls listens for the task's abort while
 * it runs: adding and removing a listener on an `AbortSignal` every turn costs more than the rest of
 * a small batch's bookkeeping, while adding to and deleting from a set costs next to nothing.
 * Listeners run in the order they were added, after the listeners added to the signal before the
 * first one (as they would have run had each been added to the signal itself).
 */
export class AbortListeners {
  readonly #signal: AbortSignal
  readonly #listeners = new Set<() => void>()
  #attached = false

  constructor(signal: AbortSignal) {
    this.#signal = signal
  }

  /** Calls `listener` once when the signal aborts; the caller checks `aborted` first, as with the signal. */
  add(listener: () => void): void {
    if (!this.#attached) {
      this.#attached = true
      this.#signal.addEventListener('abort', () => this.#abort(), { once: true })
    }
    this.#listeners.add(listener)
  }

  /**
   * What `value` settles to, or `undefined` as soon as the signal aborts: host code the task awaits
   * (a hook, an approval check) that ignores its signal must not keep an interrupted task from
   * ending. A rejection is thrown, unless the abort came first.
   */
  async unlessAborted<T>(value: T | PromiseLike<T>): Promise<T | undefined> {
    if (this.#signal.aborted) return undefined
    let stop!: () => void
    const aborted = new Promise<undefined>((resolve) => {
      stop = () => resolve(undefined)
    })
    this.add(stop)
    try {
      return await Promise.race([Promise.resolve(value), aborted])
    } finally {
      this.delete(stop)
    }
  }

  /** Stops listening (nothing happens if `listener` was not added, or has run). */
  delete(listener: () => void): void {
    this.#listeners.delete(listener)
  }

  #abort(): void {
    const listeners = [...this.#listeners]
    this.#listeners.clear()
    for (const listener of listeners) {
      try {
        listener()
      } catch (error) {
        // As the signal reports a throwing listener (an uncaught exception), without skipping the others.
        queueMicrotask(() => {
          throw error
        })
      }
    }
  }
}
