/**
 * Wakes the followers of a session when it changes. A follower waits with `next(sessionId,
 * signal)`; `wake(sessionId)` (an append, a delete) and `wakeAll()` (close) resolve the waits.
 */
export class Wakers {
  readonly #waiting = new Map<string, Set<() => void>>()

  /** Resolves at the session's next change, when `signal` aborts, or at `wakeAll`. */
  next(sessionId: string, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const set = this.#waiting.get(sessionId) ?? new Set<() => void>()
      this.#waiting.set(sessionId, set)
      const done = () => {
        set.delete(done)
        if (set.size === 0 && this.#waiting.get(sessionId) === set) this.#waiting.delete(sessionId)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      set.add(done)
      signal?.addEventListener('abort', done, { once: true })
    })
  }

  wake(sessionId: string): void {
    for (const done of [...(this.#waiting.get(sessionId) ?? [])]) done()
  }

  wakeAll(): void {
    for (const sessionId of [...this.#waiting.keys()]) this.wake(sessionId)
  }
}
