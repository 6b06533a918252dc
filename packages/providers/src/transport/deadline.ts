import { setLongTimeout } from './long-timeout.js'

/**
 * The overall deadline of one attempt: from sending the request to the body's last byte, one
 * timer. Unlike the idle timeout, bytes arriving do not reset it, so keep-alive comments or blank
 * lines sent forever still end. 0 or `Infinity` disables it.
 */
export class ResponseDeadline {
  private timer: ReturnType<typeof setTimeout> | undefined
  /** The deadline passed during the current attempt. */
  fired = false

  constructor(readonly timeoutMs: number) {}

  /** Starts the clock for a new attempt; `onExpire` runs when it passes (abort the request). */
  start(onExpire: () => void): void {
    this.stop()
    this.fired = false
    const ms = this.timeoutMs
    if (!(ms > 0 && Number.isFinite(ms))) return
    const expire = () => {
      this.timer = undefined
      this.fired = true
      onExpire()
    }
    setLongTimeout(expire, ms, (timer) => {
      // A stream the caller forgot must not keep the process alive until its deadline.
      ;(timer as { unref?: () => void }).unref?.()
      this.timer = timer
    })
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }
}
