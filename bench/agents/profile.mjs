// Where a client's CPU goes in the agents task, by phase: each run is a fresh worker process under
// `node --cpu-prof`; every sample is put in the phase it fell in (before turn 1: the agent built,
// the run started, the input checked; turn 1; turns 2-50) from the worker's turn clock, and
// summed by package and by function. Profiled milliseconds (sampling slows the process), the main
// thread only: compare clients and phases with each other, not with `run.mjs`'s figures.
// Run: node bench/agents/profile.mjs --clients kode,kode-providers [--runs 6] [--top 25]
// (`--functions node` lists the functions of another package than Kode's: `node` (Node's own, undici included), `eventsource-parser`, ...)
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { parseReport } from '../providers/protocol.mjs'
import { startServerProcess } from '../providers/server-control.mjs'
import { CLIENT_NAMES } from './clients/index.mjs'

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: 'kode,kode-providers' },
    runs: { type: 'string', default: '6' },
    top: { type: 'string', default: '25' },
    interval: { type: 'string', default: '50' },
    functions: { type: 'string', default: '@kode/' },
  },
})
const clients = values.clients.split(',').filter(Boolean)
for (const name of clients) if (!CLIENT_NAMES.includes(name)) throw new Error(`unknown client: ${name}`)
const runs = Number(values.runs)
const top = Number(values.top)
const PHASES = ['before turn 1', 'turn 1', 'turns 2-50']
/** A gap between samples longer than this is the process descheduled, not work: capped. */
const MAX_SAMPLE_US = 500

const worker = fileURLToPath(new URL('./worker.mjs', import.meta.url))

/** One profiled run: the worker's report and its profile. */
function profiledRun(client, origin) {
  const dir = mkdtempSync(join(tmpdir(), 'kode-agents-profile-'))
  const args = ['--cpu-prof', `--cpu-prof-interval=${values.interval}`, `--cpu-prof-dir=${dir}`, worker]
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...args, client, origin], { maxBuffer: 64 << 20 }, (error, stdout) => {
      try {
        const report = parseReport(stdout)
        if (!report || report.error || report.wrong) {
          throw new Error(`${client}: ${report?.error ?? report?.wrong ?? error?.message ?? 'no report'}`)
        }
        const [file] = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'))
        resolve({ report, profile: JSON.parse(readFileSync(join(dir, file), 'utf8')) })
      } catch (failure) {
        reject(failure)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  })
}

/** What a sample's function is counted under: its package, a node module, or V8's own. */
function packageOf(frame) {
  const url = frame.url
  const ours = /packages\/(\w[\w-]*)\/dist/.exec(url)
  if (ours) return `@kode/${ours[1]}`
  const module = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (module) return module[1]
  if (url.startsWith('node:')) return 'node'
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)'
  return url.split('/').slice(-2).join('/')
}

/** Adds one run's samples to `totals`: phase -> { all, byPackage, byFunction } (µs). */
function addRun(totals, { report, profile }) {
  const { start, turns, end } = report.clockUs
  const phaseAt = (t) => (t < start || t > end ? -1 : t < turns[0] ? 0 : t < turns[1] ? 1 : 2)
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  let t = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]
    const phase = phaseAt(t)
    const frame = nodes.get(profile.samples[i]).callFrame
    if (phase < 0 || frame.functionName === '(idle)') continue
    const us = Math.min(profile.timeDeltas[i + 1] ?? 0, MAX_SAMPLE_US)
    const sums = totals[phase]
    sums.all += us
    const pkg = packageOf(frame)
    sums.byPackage.set(pkg, (sums.byPackage.get(pkg) ?? 0) + us)
    if (pkg.startsWith(values.functions)) {
      const name = `${frame.functionName || '(anonymous)'} (${pkg} ${frame.lineNumber + 1})`
      sums.byFunction.set(name, (sums.byFunction.get(name) ?? 0) + us)
    }
  }
}

const perRun = (us) => (us / runs / 1000).toFixed(2)
const rows = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n)

const server = await startServerProcess(new URL('./server-process.mjs', import.meta.url))
try {
  for (const client of clients) {
    const totals = PHASES.map(() => ({ all: 0, byPackage: new Map(), byFunction: new Map() }))
    for (let run = 0; run < runs; run++) addRun(totals, await profiledRun(client, server.origin))
    process.stdout.write(`\n## ${client}: profiled ms per run (${runs} runs), main thread, self time\n`)
    for (const [i, phase] of PHASES.entries()) {
      const sums = totals[i]
      process.stdout.write(`\n### ${phase}: ${perRun(sums.all)} ms\n\n`)
      for (const [name, us] of rows(sums.byPackage, 12))
        process.stdout.write(`${perRun(us).padStart(8)}  ${name}\n`)
      process.stdout.write(`\nfunctions of ${values.functions}:\n`)
      for (const [name, us] of rows(sums.byFunction, top))
        process.stdout.write(`${perRun(us).padStart(8)}  ${name}\n`)
    }
  }
} finally {
  await server.stop()
}
