// Node's fetch parses HTTP with undici's llhttp, which is WebAssembly. V8 first runs it with its
// baseline compiler and, during the first large response of a process, recompiles the hot
// functions with its optimizing compiler on a background thread: about 250 ms of CPU that every
// client pays the same way, whatever it does with the bytes. Measured from a cold process, each
// cell would be charged the part of that compilation that happens to fall inside its own run
// (more for a client that runs longer). So every measuring process reads one large response and
// waits for that background work to finish before the measurement starts.

/** Bytes of the warm-up response: several times what a measured stream sends. */
export const WARM_UP_BYTES = 4 * 1024 * 1024

/** A body of `bytes` bytes of SSE-shaped text, the kind of input llhttp sees in a measured run. */
export function warmUpBody(bytes = WARM_UP_BYTES) {
  const event = `data: ${JSON.stringify({ type: 'warm_up', text: 'x'.repeat(60) })}\n\n`
  return Buffer.from(event.repeat(Math.ceil(bytes / event.length)).slice(0, bytes))
}

const QUIET_WINDOW_MS = 25
/** CPU below this share of a window means the compiler threads are done. */
const QUIET_SHARE = 0.1
const SETTLE_LIMIT_MS = 3000

/**
 * Reads the server's warm-up response to its end with `fetch`, then waits until the process is
 * quiet (under 10% of one core over a 25 ms window, at most 3 s), so the optimizing compiler's
 * background work is over before anything is measured. Resolves to how long it waited.
 * `fetchBody` is the `fetch` to read it with (a worker that taps global `fetch` passes the untapped
 * one).
 */
export async function warmHttpParser(origin, fetchBody = fetch) {
  const response = await fetchBody(`${origin}/warmup/parser`)
  const reader = response.body.getReader()
  while (!(await reader.read()).done);
  return waitForQuiet()
}

/**
 * Waits until the process is quiet: under 10% of one core over a 25 ms window (at most 3 s), so
 * background compiles and collections started before it are over. Resolves to how long it waited.
 */
export async function waitForQuiet() {
  const started = performance.now()
  for (;;) {
    const before = process.cpuUsage()
    await new Promise((resolve) => setTimeout(resolve, QUIET_WINDOW_MS))
    const used = process.cpuUsage(before)
    const quiet = (used.user + used.system) / 1000 < QUIET_WINDOW_MS * QUIET_SHARE
    const waited = performance.now() - started
    if (quiet || waited > SETTLE_LIMIT_MS) return waited
  }
}
