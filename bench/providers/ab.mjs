// Compares two builds of @kode/providers the way `pnpm bench` measures one: fresh processes,
// interleaved rounds, every ratio against the floor of the same round.
//
//   node bench/providers/ab.mjs save <name>        copies packages/providers/dist to a saved build
//   node bench/providers/ab.mjs run <a> <b> [--runs N] [--wires a,b] [--scenarios a,b]
//
// `<a>` and `<b>` are saved builds, or `dist` for the current one. In each round every
// (scenario, wire) group runs floor, a and b (in a seeded shuffled order), floor; the report is
// per cell the median over rounds of a / floor, b / floor and b / a (CPU, user + system), the
// floor's A/A (its second run over its first) and the load average before and after.
import { cpSync, existsSync, rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { median } from '../lib/report.mjs'
import { measure } from './measure.mjs'
import { SCENARIOS } from './scenarios.mjs'
import { startServerProcess } from './server-control.mjs'
import { shuffled } from './shuffle.mjs'
import { WIRE_NAMES } from './wires/index.mjs'

const DIST = new URL('../../packages/providers/dist/', import.meta.url)
// Inside the package, so the saved build resolves its dependencies as dist does.
const SAVED = new URL('../../packages/providers/.bench-builds/', import.meta.url)

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '9' },
    wires: { type: 'string' },
    scenarios: { type: 'string' },
  },
})
const [command, ...names] = positionals

if (command === 'save' && names.length === 1) {
  const target = new URL(`${names[0]}/`, SAVED)
  rmSync(target, { recursive: true, force: true })
  cpSync(DIST, target, { recursive: true })
  console.log(`saved ${DIST.pathname} as ${names[0]}`)
} else if (command === 'run' && names.length === 2) {
  await run(names, values)
} else {
  console.error('usage: ab.mjs save <name> | ab.mjs run <a> <b> [--runs N] [--wires a,b] [--scenarios a,b]')
  process.exit(2)
}

function clientOf(name) {
  const dir = name === 'dist' ? DIST : new URL(`${name}/`, SAVED)
  const entry = new URL('index.js', dir)
  if (!existsSync(entry)) throw new Error(`no build at ${entry.pathname}`)
  return `kode@${entry.href}`
}

async function run([a, b], options) {
  const clients = { a: clientOf(a), b: clientOf(b) }
  const runs = Number(options.runs)
  const wires = options.wires ? options.wires.split(',') : WIRE_NAMES
  const scenarios = options.scenarios ? options.scenarios.split(',') : SCENARIOS
  const groups = scenarios.flatMap((scenario) => wires.map((wire) => ({ scenario, wire })))
  const figures = new Map(groups.map((g) => [`${g.scenario} ${g.wire}`, []]))
  const loadBefore = loadavg()[0]
  const server = await startServerProcess()
  try {
    for (let round = 1; round <= runs; round++) {
      process.stderr.write(`round ${round}/${runs}\n`)
      for (const group of shuffled(groups, round)) {
        const cpu = {}
        const once = async (client) => {
          const report = await measure('./worker.mjs', [client, group.wire, group.scenario, server.origin])
          if (report.error || report.wrong || report.unavailable)
            throw new Error(`${group.scenario} ${group.wire}: ${JSON.stringify(report)}`)
          return report.cpuMs
        }
        cpu.floor1 = await once('floor')
        for (const side of shuffled(['a', 'b'], round * 7 + groups.indexOf(group)))
          cpu[side] = await once(clients[side])
        cpu.floor2 = await once('floor')
        figures.get(`${group.scenario} ${group.wire}`).push(cpu)
      }
    }
  } finally {
    await server.stop()
  }
  const loadAfter = loadavg()[0]
  console.log(
    `a = ${a}, b = ${b}; ${runs} rounds; 1-minute load ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after`,
  )
  console.log('cell                      floor ms   a ms   b ms   a/floor  b/floor  b/a    floor A/A')
  for (const [cell, rows] of figures) {
    const floor = (r) => (r.floor1 + r.floor2) / 2
    const m = (f) => median(rows.map(f))
    console.log(
      [
        cell.padEnd(25),
        m(floor).toFixed(1).padStart(8),
        m((r) => r.a)
          .toFixed(1)
          .padStart(6),
        m((r) => r.b)
          .toFixed(1)
          .padStart(6),
        `${m((r) => r.a / floor(r)).toFixed(2)}x`.padStart(8),
        `${m((r) => r.b / floor(r)).toFixed(2)}x`.padStart(8),
        `${m((r) => r.b / r.a).toFixed(2)}x`.padStart(6),
        `${m((r) => r.floor2 / r.floor1).toFixed(2)}x`.padStart(10),
      ].join(' '),
    )
  }
}
