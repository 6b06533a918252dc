import { MAX_TIMER_MS } from './long-timeout.js'

/**
 * Calls `onIdle` when a wait has gone on for `timeoutMs` without activity. Only waits count: while
 * paused (the consumer has what it asked for and has not asked again) no time is counted, so a
 * slow consumer is never taken for a stalled connection. One timer per stream, re-armed lazily
 * from the time of the last activity, so a fast stream costs a clock read per chunk and no timer
 * churn. A timeout of 0 or `Infinity` disables it.
 */
export class IdleWatchdog {
  private timer: ReturnType<typeof setTimeout> | undefined
  private lastTouch = 0
  private running = false
  /** Something (the response, the next chunk) is being waited for. */
  private waiting = false

  constructor(
    private readonly timeoutMs: number,
    private readonly onIdle: () => void,
  ) {}

  /** Starts watching (again), waiting from now. */
  start(): void {
    if (!(this.timeoutMs > 0 && Number.isFinite(this.timeoutMs))) return
    this.running = true
    this.waiting = true
    this.lastTouch = Date.now()
    this.schedule(this.timeoutMs)
  }

  /** Records activity. */
  touch(): void {
    if (this.running) this.lastTouch = Date.now()
  }

  /** A wait begins (a read is pending): idle time counts from now. */
  resume(): void {
    if (!this.running) return
    this.waiting = true
    this.lastTouch = Date.now()
    if (this.timer === undefined) this.schedule(this.timeoutMs)
  }

  /** Nothing is pending: idle time stops counting until `resume`. The timer lapses on its own. */
  pause(): void {
    this.waiting = false
  }

  /** Stops watching; `onIdle` will not be called until `start` again. */
  stop(): void {
    this.running = false
    this.waiting = false
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private schedule(ms: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    // `check` re-arms for the idle time left, so a step within what a timer can wait is enough.
    this.timer = setTimeout(() => this.check(), Math.min(ms, MAX_TIMER_MS))
  }

  private check(): void {
    this.timer = undefined
    if (!this.running || !this.waiting) return
    const idle = Date.now() - this.lastTouch
    if (idle >= this.timeoutMs) {
      this.running = false
      this.onIdle()
    } else {
      this.schedule(this.timeoutMs - idle)
    }
  }
}
