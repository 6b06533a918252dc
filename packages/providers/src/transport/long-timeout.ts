/** The longest delay `setTimeout` honours: past it (about 24.8 days), Node and browsers fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * `setTimeout` for any delay: one longer than {@link MAX_TIMER_MS} waits in steps. `onTimer` is
 * told of each timer armed (to keep, unref or clear it); the callback runs once, after `ms`.
 */
export function setLongTimeout(
  callback: () => void,
  ms: number,
  onTimer: (timer: ReturnType<typeof setTimeout>) => void,
): void {
  const step = Math.min(ms, MAX_TIMER_MS)
  onTimer(setTimeout(() => (step < ms ? setLongTimeout(callback, ms - step, onTimer) : callback()), step))
}
