/** Work under way, so that closing can wait for it: each promise counts until it settles. */
export class InFlight {
  readonly #running = new Set<Promise<unknown>>()

  /** Counts `work` until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work)
    const forget = () => {
      this.#running.delete(work)
    }
    work.then(forget, forget)
    return work
  }

  /** Resolves once nothing is under way, counting what starts while it waits. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running])
  }
}
