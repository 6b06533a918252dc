// CPU time per thread of this process, from Linux's /proc/self/task/<tid>/schedstat (nanoseconds
// on a CPU). `process.cpuUsage()` sums every thread: the main thread running JavaScript, and V8's
// worker threads compiling hot functions with the optimizing compiler and helping the garbage
// collector. Splitting the two tells compiling from running. Run with `--single-threaded-gc` and
// the background share is the optimizing compiler alone (and, over a network, undici's
// WebAssembly parser being recompiled, unless it was warmed first).
import { readdirSync, readFileSync } from 'node:fs'

/** `{ main, background }` in ms of CPU so far, or `undefined` where /proc has no schedstat. */
export function threadCpu() {
  let tids
  try {
    tids = readdirSync('/proc/self/task')
  } catch {
    return undefined
  }
  let main = 0
  let background = 0
  for (const tid of tids) {
    let ns
    try {
      ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      continue // a thread that ended while we read
    }
    if (!Number.isFinite(ns)) return undefined
    if (tid === String(process.pid)) main += ns / 1e6
    else background += ns / 1e6
  }
  return { main, background }
}

/** The CPU used per kind of thread since `before` (from {@link threadCpu}), or `undefined`. */
export function threadCpuSince(before) {
  const now = threadCpu()
  if (!before || !now) return undefined
  return { main: now.main - before.main, background: now.background - before.background }
}

/** `main 41.2 + background 17.5 ms`, or '' when unknown. */
export function formatThreadCpu(split) {
  return split ? `main ${split.main.toFixed(1)} + background ${split.background.toFixed(1)} ms` : ''
}
