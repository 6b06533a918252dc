/**
 * Runs work one after another per key, so appends to a session are applied in call order even
 * though the pool may run queries on several connections at once.
 */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>()

  /** Runs `work` after everything queued for `key` before it settled. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve()
    const result = previous.then(work, work)
    const tail = result.catch(() => {})
    this.#tails.set(key, tail)
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    })
    return result
  }

  /** Resolves once everything queued so far settled. */
  async idle(): Promise<void> {
    await Promise.all([...this.#tails.values()])
  }
}
