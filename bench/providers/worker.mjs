// One measured run, in a fresh process: node worker.mjs <client> <wire> <scenario> <origin> [warm|cold]
//
// Loading the client's library and building its client object happen before the measurement;
// so does one large response (one tiny one with `cold`), which loads Node's fetch (undici) the
// same way for every client and, unless `cold`, warms its HTTP parser (see warm-up.mjs).
// Measured: CPU time (user + system) and wall time from just before the request to the end of
// the stream, and the process's peak RSS.
import { clientByName } from './clients/index.mjs'
import { Unavailable } from './clients/unavailable.mjs'
import { reportAndExit } from './protocol.mjs'
import { warmHttpParser } from './warm-up.mjs'

const [client, wire, scenario, origin, parser = 'warm'] = process.argv.slice(2)

try {
  const { prepare } = await clientByName(client).load()
  const run = await prepare({ wire, origin, scenario })
  if (parser === 'cold') await (await fetch(`${origin}/warmup`)).text()
  else await warmHttpParser(origin)

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
