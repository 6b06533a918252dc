/**
 * Calls `onIdle` when `touch` has not been called for `timeoutMs`. One timer per stream, re-armed
 * lazily from the time of the last touch, so a fast stream costs a clock read per chunk and no
 * timer churn. A timeout of 0 or `Infinity` disables it.
 */
export class IdleWatchdog {
  private timer: ReturnType<typeof setTimeout> | undefined
  private lastTouch = 0
  private running = false

  constructor(
    private readonly timeoutMs: number,
    private readonly onIdle: () => void,
  ) {}

  /** Starts watching (again); counts as activity. */
  start(): void {
    if (!(this.timeoutMs > 0 && Number.isFinite(this.timeoutMs))) return
    this.running = true
    this.lastTouch = Date.now()
    this.schedule(this.timeoutMs)
  }

  /** Records activity. */
  touch(): void {
    if (this.running) this.lastTouch = Date.now()
  }

  /** Stops watching; `onIdle` will not be called until `start` again. */
  stop(): void {
    this.running = false
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private schedule(ms: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = setTimeout(() => this.check(), ms)
  }

  private check(): void {
    this.timer = undefined
    if (!this.running) return
    const idle = Date.now() - this.lastTouch
    if (idle >= this.timeoutMs) {
      this.running = false
      this.onIdle()
    } else {
      this.schedule(this.timeoutMs - idle)
    }
  }
}
