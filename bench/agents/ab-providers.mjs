// Compares two builds of @kode/providers in the agents task: fresh processes, interleaved rounds.
//
//   node bench/providers/ab.mjs save <name>        (saves packages/providers/dist, as for ab.mjs)
//   node bench/agents/ab-providers.mjs <a> <b> [--runs N] [--client kode-providers]
//
// `<a>` and `<b>` are saved builds (under packages/providers/.bench-builds). Each round runs the
// floor, the client with a and with b (in a seeded shuffled order), the floor again, every run a
// fresh `worker.mjs` process; both builds are loaded through the same resolve hook
// (providers-build.mjs). Prints medians over rounds: CPU, CPU before turn 1 (building the first
// request), turn 1, turns 2-6 and 45-49 (mean per turn), b / a per round, the floor's A/A and the
// load average.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { median } from '../lib/report.mjs'
import { parseReport } from '../providers/protocol.mjs'
import { startServerProcess } from '../providers/server-control.mjs'
import { shuffled } from '../providers/shuffle.mjs'

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: 'string', default: '20' }, client: { type: 'string', default: 'kode-providers' } },
})
if (positionals.length !== 2) {
  console.error('usage: ab-providers.mjs <a> <b> [--runs N] [--client kode-providers|kode]')
  process.exit(2)
}
const SAVED = fileURLToPath(new URL('../../packages/providers/.bench-builds/', import.meta.url))
const builds = positionals.map((name) => {
  if (!existsSync(`${SAVED}${name}/index.js`)) throw new Error(`no saved build ${name} in ${SAVED}`)
  return `${SAVED}${name}`
})
const worker = fileURLToPath(new URL('./worker.mjs', import.meta.url))
const hook = fileURLToPath(new URL('./providers-build.mjs', import.meta.url))

function once(client, build, origin) {
  const args = ['--import', hook, worker, client, origin]
  const env = { ...process.env, KODE_PROVIDERS_BUILD: build ?? '' }
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      const report = parseReport(stdout)
      if (report && !report.error && !report.wrong) resolve(report)
      else reject(new Error(`${client}: ${report?.error ?? report?.wrong ?? error?.message ?? stderr}`))
    })
  })
}

const runs = Number(values.runs)
const rows = { floor1: [], floor2: [], a: [], b: [] }
const loads = [loadavg()[0]]
const server = await startServerProcess(new URL('./server-process.mjs', import.meta.url))
try {
  for (let round = 1; round <= runs; round++) {
    rows.floor1.push(await once('floor', undefined, server.origin))
    for (const side of shuffled(['a', 'b'], round))
      rows[side].push(await once(values.client, builds[side === 'a' ? 0 : 1], server.origin))
    rows.floor2.push(await once('floor', undefined, server.origin))
    loads.push(loadavg()[0])
    process.stderr.write(`round ${round}/${runs}\n`)
  }
} finally {
  await server.stop()
}

const sum = (xs) => xs.reduce((x, y) => x + y, 0)
const turns = (r, from, to) => sum(r.perTurnMs.slice(from - 1, to)) / (to - from + 1)
const columns = {
  'CPU ms': (r) => r.cpuMs,
  'before turn 1': (r) => r.cpuMs - sum(r.perTurnMs),
  'turn 1': (r) => r.perTurnMs[0],
  'turns 2-6': (r) => turns(r, 2, 6),
  'turns 45-49': (r) => turns(r, 45, 49),
}
const names = { floor1: 'floor, first', floor2: 'floor, second', a: positionals[0], b: positionals[1] }
console.log(`| run | ${Object.keys(columns).join(' | ')} |`)
console.log(
  `| --- | ${Object.keys(columns)
    .map(() => '---')
    .join(' | ')} |`,
)
for (const [key, reports] of Object.entries(rows)) {
  const cells = Object.values(columns).map((of) => median(reports.map(of)).toFixed(2))
  console.log(`| ${names[key]} | ${cells.join(' | ')} |`)
}
const floorOf = (i) => (rows.floor1[i].cpuMs + rows.floor2[i].cpuMs) / 2
const ratio = (side) => median(rows[side].map((r, i) => r.cpuMs / floorOf(i))).toFixed(3)
const ba = median(rows.b.map((r, i) => r.cpuMs / rows.a[i].cpuMs)).toFixed(3)
const aa = median(rows.floor2.map((r, i) => r.cpuMs / rows.floor1[i].cpuMs)).toFixed(3)
console.log(`\na / floor ${ratio('a')}, b / floor ${ratio('b')}, b / a ${ba}; A/A ${aa}`)
console.log(
  `${runs} rounds, 1-minute load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
)
