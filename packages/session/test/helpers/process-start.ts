/**
 * This process's start on the monotonic clock, as the file store records it in its locks: the
 * uptime read between two clock readings, the tightest of a few, so a pause of this thread between
 * the readings (a loaded machine) does not move it. With it and our pid, a lock is this process's
 * own, and live.
 */
export function ourStart(): number {
  let best = { gap: Number.POSITIVE_INFINITY, start: 0 }
  for (let i = 0; i < 8; i++) {
    const before = Number(process.hrtime.bigint()) / 1e6
    const uptimeMs = process.uptime() * 1000
    const after = Number(process.hrtime.bigint()) / 1e6
    if (after - before < best.gap) best = { gap: after - before, start: (before + after) / 2 - uptimeMs }
  }
  return best.start
}
