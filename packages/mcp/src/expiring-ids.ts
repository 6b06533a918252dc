/** A set of ids, each kept for a while at most (see `expiringIds`). */
export interface ExpiringIds {
  add(id: string): void
  /** Removes `id`; false if it was not kept (never added, removed, or gone by time or count). */
  delete(id: string): boolean
  readonly size: number
}

/**
 * Ids kept for `keepMs` each at most, and no more than `max` (at least 1) of them, the oldest
 * going first: for records that wait for something that may never come, so that they cannot pile
 * up meanwhile. Their timers do not keep the process alive.
 */
export function expiringIds(keepMs: number, max: number): ExpiringIds {
  // A Map iterates in insertion order: its first key is the oldest.
  const timers = new Map<string, ReturnType<typeof setTimeout>>()
  const drop = (id: string) => {
    const timer = timers.get(id)
    if (timer === undefined) return false
    clearTimeout(timer)
    timers.delete(id)
    return true
  }
  return {
    add(id) {
      drop(id)
      const oldest = timers.keys().next()
      if (timers.size >= max && !oldest.done) drop(oldest.value)
      const timer = setTimeout(() => timers.delete(id), keepMs)
      ;(timer as { unref?: () => void }).unref?.()
      timers.set(id, timer)
    },
    delete: drop,
    get size() {
      return timers.size
    },
  }
}
