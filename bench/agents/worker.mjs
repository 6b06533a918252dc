// One measured task, in a fresh process: node worker.mjs <client> <origin> [warm]
//
// Before the measurement: a tap on global fetch (every client here calls it, so the start of each
// model call marks a turn), the client's library loaded and its agent built (with `warm`, one
// whole task run unmeasured too), and one large response read with Node's fetch, which loads
// undici and warms its HTTP parser the same way for every client; then a wait until the process
// is quiet, so no background compile of that or of the imports falls in the measurement (see
// bench/providers/warm-up.mjs). Measured: CPU (user + system) and wall time of the whole task,
// CPU per turn (from the start of one model call to the next), and the process's peak RSS. Then
// the outcome is checked: every tool call ran exactly once and the final text is the scripted one.

import { Unavailable } from '../providers/clients/unavailable.mjs'
import { reportAndExit } from '../providers/protocol.mjs'
import { warmHttpParser } from '../providers/warm-up.mjs'
import { CLIENTS } from './clients/index.mjs'
import { keyOf, runTool, TURNS } from './task.mjs'
import { mismatch } from './verify.mjs'

const [client, origin, warm] = process.argv.slice(2)

// Set before any library loads: some capture global fetch when their client is built. Each turn's
// start is kept as CPU used and as the monotonic clock (in µs, the clock of a `--cpu-prof`
// profile's timestamps, so profile.mjs can tell which turn a sample fell in).
const turnStarts = []
const turnClock = []
const clockUs = () => Number(process.hrtime.bigint() / 1000n)
const bareFetch = globalThis.fetch
globalThis.fetch = function tappedFetch(input, init) {
  if (String(input?.url ?? input).endsWith('/chat/completions')) {
    turnStarts.push(process.cpuUsage())
    turnClock.push(clockUs())
  }
  return bareFetch(input, init)
}

const cpuMs = (usage) => (usage.user + usage.system) / 1000

try {
  let ran = []
  const { prepare } = await CLIENTS[client].load()
  const run = await prepare({ origin, record: (key) => ran.push(key), runTool, keyOf, maxTurns: TURNS + 5 })
  if (warm === 'warm') {
    const wrong = mismatch(await run(), ran, turnStarts.length)
    if (wrong) reportAndExit({ wrong: `warm-up task: ${wrong}` })
    ran = []
    turnStarts.length = 0
    turnClock.length = 0
  }
  // Last, so its wait for a quiet process also covers the compiles of a warm-up task.
  await warmHttpParser(origin, bareFetch)

  const cpuBefore = process.cpuUsage()
  const start = performance.now()
  const startUs = clockUs()
  const result = await run()
  const endUs = clockUs()
  const wallMs = performance.now() - start
  const cpu = process.cpuUsage(cpuBefore)
  const end = process.cpuUsage()
  const maxRssKb = process.resourceUsage().maxRSS

  const perTurnMs = turnStarts.map((at, i) => cpuMs(turnStarts[i + 1] ?? end) - cpuMs(at))
  reportAndExit({
    cpuMs: cpuMs(cpu),
    userMs: cpu.user / 1000,
    systemMs: cpu.system / 1000,
    wallMs,
    maxRssKb,
    perTurnMs,
    clockUs: { start: startUs, turns: turnClock, end: endUs },
    events: result.events,
    wrong: mismatch(result, ran, perTurnMs.length),
  })
} catch (error) {
  if (error instanceof Unavailable) reportAndExit({ unavailable: error.message })
  else reportAndExit({ error: String(error?.stack ?? error) })
}
