// One measured run, in a fresh process: node worker.mjs <client> <wire> <scenario> <origin>
//
// Loading the client's library and building its client object happen before the measurement;
// so does one tiny request, which loads Node's fetch (undici) the same way for every client.
// Measured: CPU time (user + system) and wall time from just before the request to the end of
// the stream, and the process's peak RSS.
import { CLIENTS } from './clients/index.mjs'
import { Unavailable } from './clients/unavailable.mjs'
import { reportAndExit } from './protocol.mjs'

const [client, wire, scenario, origin] = process.argv.slice(2)

try {
  const { prepare } = await CLIENTS[client].load()
  const run = await prepare({ wire, origin, scenario })
  await (await fetch(`${origin}/warmup`)).text()

  const cpuBefore = process.cpuUsage()
  const start = performance.now()
  const result = await run()
  const wallMs = performance.now() - start
  const cpu = process.cpuUsage(cpuBefore)
  const maxRssKb = process.resourceUsage().maxRSS

  const { mismatch } = await import('./verify.mjs')
  reportAndExit({
    cpuMs: (cpu.user + cpu.system) / 1000,
    userMs: cpu.user / 1000,
    systemMs: cpu.system / 1000,
    wallMs,
    maxRssKb,
    wrong: mismatch(scenario, result),
  })
} catch (error) {
  if (error instanceof Unavailable) reportAndExit({ unavailable: error.message })
  else reportAndExit({ error: String(error?.stack ?? error) })
}
