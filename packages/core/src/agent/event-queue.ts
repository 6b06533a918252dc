const DONE: IteratorResult<never, undefined> = Object.freeze({ done: true, value: undefined })

/**
 * The single-consumer queue between the engine and a run's iterator. `push` never waits: the
 * engine runs ahead and items are buffered until the consumer takes them, one resolved promise
 * per item, with no stream stacking. The producer ends the queue (`end`, or `fail` with the error
 * the consumer receives after the buffered items); the consumer leaves with `close`.
 */
export class EventQueue<T> {
  #buffer: (T | undefined)[] = []
  #head = 0
  #waiting:
    | { resolve: (result: IteratorResult<T, undefined>) => void; reject: (error: unknown) => void }
    | undefined
  #closed = false
  #failure: { error: unknown } | undefined

  push(item: T): void {
    if (this.#closed) return
    const waiting = this.#waiting
    if (waiting) {
      this.#waiting = undefined
      waiting.resolve({ done: false, value: item })
    } else this.#buffer.push(item)
  }

  /** No more items; the consumer drains the buffer, then is done. */
  end(): void {
    if (this.#closed) return
    this.#closed = true
    this.#waiting?.resolve(DONE)
    this.#waiting = undefined
  }

  /** No more items; after the buffer the consumer receives `error` (once), then is done. */
  fail(error: unknown): void {
    if (this.#closed) return
    this.#closed = true
    const waiting = this.#waiting
    this.#waiting = undefined
    if (waiting) waiting.reject(error)
    else this.#failure = { error }
  }

  /** The consumer left: drop what is buffered, accept nothing more, and end a pending `next()`. */
  close(): void {
    this.#closed = true
    this.#buffer = []
    this.#head = 0
    this.#failure = undefined
    // A `next()` still waiting (a consumer calling `return()` without awaiting it) is done, not left hanging.
    this.#waiting?.resolve(DONE)
    this.#waiting = undefined
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.#head < this.#buffer.length) {
      const value = this.#buffer[this.#head] as T
      this.#buffer[this.#head++] = undefined
      if (this.#head === this.#buffer.length) {
        this.#buffer = []
        this.#head = 0
      }
      return Promise.resolve({ done: false, value })
    }
    const failure = this.#failure
    if (failure) {
      this.#failure = undefined
      return Promise.reject(failure.error)
    }
    if (this.#closed) return Promise.resolve(DONE)
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject }
    })
  }
}
