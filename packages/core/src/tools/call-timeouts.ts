/** The longest delay `setTimeout` honours; longer timeouts are treated as none. */
export const MAX_TIMER_MS = 2 ** 31 - 1

interface Deadline {
  /** `performance.now()` at which it falls due. */
  at: number
  onTimeout: () => void
}

/**
 * The timeouts of the tool calls of one batch, through one timer armed for the earliest deadline:
 * a timer made and cleared per call was a measurable share of a cheap call's cost. Each call's
 * timeout still falls due `ms` after it started, as its own timer would, and calls that fall due
 * together time out in the order they started. The timer is cleared as soon as no call waits.
 */
export class CallTimeouts {
  /** In the order the calls started. */
  readonly #waiting = new Set<Deadline>()
  #timer: ReturnType<typeof setTimeout> | undefined
  /** The deadline the timer is armed for. */
  #armedFor = 0

  /**
   * Calls `onTimeout` once `ms` have passed (at most `MAX_TIMER_MS`), unless the returned function
   * is called first (the call ended).
   */
  start(ms: number, onTimeout: () => void): () => void {
    const deadline: Deadline = { at: performance.now() + ms, onTimeout }
    this.#waiting.add(deadline)
    if (this.#timer === undefined || deadline.at < this.#armedFor) this.#arm(deadline.at)
    return () => {
      if (!this.#waiting.delete(deadline) || this.#waiting.size > 0) return
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#armedFor = at
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, at - performance.now()))
  }

  #fire(): void {
    this.#timer = undefined
    const due = this.#armedFor
    let next = Number.POSITIVE_INFINITY
    for (const deadline of [...this.#waiting]) {
      if (deadline.at <= due) {
        this.#waiting.delete(deadline)
        deadline.onTimeout()
      }
    }
    for (const deadline of this.#waiting) next = Math.min(next, deadline.at)
    // (A call started by a timeout's listeners may have armed the timer already.)
    if (next !== Number.POSITIVE_INFINITY && (this.#timer === undefined || next < this.#armedFor)) {
      this.#arm(next)
    }
  }
}
