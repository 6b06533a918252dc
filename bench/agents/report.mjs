// The agents benchmark's output: one table of the whole task, one of CPU per turn, and how Kode
// stands against its targets.
import { cpus } from 'node:os'
import { median, printTable } from '../lib/report.mjs'
import { floorAA, medians, ratioToFloor } from '../providers/figures.mjs'
import { CLIENTS } from './clients/index.mjs'
import { CALLS_PER_TURN, TEXT_DELTAS, TURNS } from './task.mjs'

/** Kode's targets, from the performance issue. */
export const TARGETS = { cpuRatio: 1.15 }

const ms = (n) => (n === undefined ? '' : n.toFixed(0))
const ms2 = (n) => (n === undefined ? '' : n.toFixed(2))
const mb = (kb) => (kb / 1024).toFixed(1)
const ratio = (n) => (n === undefined ? '' : `${n.toFixed(2)}x`)
const signed = (n) => (n === undefined ? '' : `${n >= 0 ? '+' : ''}${n.toFixed(1)}`)

/** A run's CPU per turn over `turns` (1-based, inclusive), median over the turns. */
const turnCpu = (run, from, to) => median(run.perTurnMs.slice(from - 1, to))

/** Median over a cell's runs of its per-turn figure. */
const perTurn = (cell, from, to = from) => median(cell.runs.map((run) => turnCpu(run, from, to)))

function machine() {
  const [first] = cpus()
  return `Node ${process.version}, ${process.platform} ${process.arch}, ${cpus().length} x ${first?.model.trim() ?? 'unknown CPU'}`
}

/** Prints the tables to stdout, with footnotes for clients that have no figures. */
export function printResults({ options, cells, warnings, load }) {
  console.log(
    `${machine()}; 1-minute load average ${load[0].toFixed(2)} before, ${load[1].toFixed(2)} after.`,
  )
  console.log(
    `Median of ${options.runs} fresh-process run(s) per client${options.warm ? ', each after one unmeasured warm-up task in the same process' : ''}.`,
  )
  for (const warning of warnings) console.log(`\nwarning: ${warning}`)
  const floorCell = cells.get('floor')
  const floor = medians(floorCell)
  const kodeCell = cells.get('kode')
  const rows = [
    [
      'client',
      'CPU ms',
      'CPU vs floor',
      'CPU vs Kode',
      'wall ms',
      'wall vs floor',
      'peak RSS MB',
      'RSS vs floor MB',
      'events',
    ],
  ]
  const turnRows = [['client', 'turn 1', 'turns 2-6', 'turns 45-49', 'turn 50']]
  const notes = []
  for (const client of options.clients) {
    const cell = cells.get(client)
    const label = CLIENTS[client].label
    const m = medians(cell)
    if (!m) {
      notes.push(`[${notes.length + 1}] ${label}: ${cell.note?.split('\n')[0] ?? 'no runs'}`)
      rows.push([label, `${cell.status} [${notes.length}]`, '', '', '', '', '', '', ''])
      continue
    }
    const isFloor = client === 'floor'
    const vsKode =
      client === 'kode'
        ? 1
        : kodeCell && medians(kodeCell)
          ? ratioToFloor(cell, kodeCell, 'cpuMs')
          : undefined
    rows.push([
      label,
      ms(m.cpuMs),
      ratio(isFloor ? 1 : ratioToFloor(cell, floorCell, 'cpuMs')),
      ratio(vsKode),
      ms(m.wallMs),
      ratio(isFloor ? 1 : ratioToFloor(cell, floorCell, 'wallMs')),
      mb(m.maxRssKb),
      signed(floor ? (m.maxRssKb - floor.maxRssKb) / 1024 : undefined),
      cell.runs[0].events === undefined ? '' : median(cell.runs.map((run) => run.events)),
    ])
    turnRows.push([
      label,
      ms2(perTurn(cell, 1)),
      ms2(perTurn(cell, 2, 6)),
      ms2(perTurn(cell, TURNS - 5, TURNS - 1)),
      ms2(perTurn(cell, TURNS)),
    ])
  }
  printTable(
    `### one ${TURNS}-turn task: ${CALLS_PER_TURN} parallel tool calls and ${TEXT_DELTAS} text deltas per turn`,
    rows,
  )
  const aa = floorAA(floorCell)
  if (aa !== undefined)
    console.log(`\nA/A, the floor's second run of each round over its first (CPU, median): ${ratio(aa)}`)
  if (notes.length > 0) console.log(`\n${notes.join('\n')}`)
  printTable(
    '### CPU ms per turn (from the start of one model call to the next; median over the turns, then over runs)',
    turnRows,
  )
  if (options.clients.includes('kode')) printTargets(cells, aa)
}

/** Rows that measure a part of a loop, not a library a host could pick. */
const DIAGNOSTIC = new Set(['floor', 'floor-events', 'kode-providers'])

function printTargets(cells, aa) {
  const kode = cells.get('kode')
  const m = medians(kode)
  console.log('\nKode targets:')
  if (!m) {
    console.log(`- no figures: ${kode.status}`)
    return
  }
  const verdict = (ok) => (ok ? 'met' : 'MISSED')
  const cpuRatio = ratioToFloor(kode, cells.get('floor'), 'cpuMs')
  const noise = aa === undefined ? '' : `; A/A noise on this run ${(Math.abs(aa - 1) * 100).toFixed(0)}%`
  console.log(
    `- CPU within ${TARGETS.cpuRatio}x of the floor: ${verdict(cpuRatio <= TARGETS.cpuRatio)} (${ratio(cpuRatio)}${noise})`,
  )
  const libraries = [...cells].filter(([client, cell]) => !DIAGNOSTIC.has(client) && medians(cell))
  const lowest = libraries.reduce((a, b) => (medians(b[1]).maxRssKb < medians(a[1]).maxRssKb ? b : a))
  console.log(
    `- lowest peak RSS of the libraries: ${verdict(lowest[0] === 'kode')} (${mb(m.maxRssKb)} MB; lowest ${CLIENTS[lowest[0]].label}, ${mb(medians(lowest[1]).maxRssKb)} MB)`,
  )
  const providersLoop = cells.get('kode-providers')
  if (providersLoop && medians(providersLoop)) {
    const split = ratioToFloor(providersLoop, cells.get('floor'), 'cpuMs')
    console.log(
      `- of that, the providers layer (the floor loop through @kode/providers): ${ratio(split)}; the engine over it: ${ratio(ratioToFloor(kode, providersLoop, 'cpuMs'))}`,
    )
  }
  const contract = cells.get('floor-events')
  if (contract && medians(contract)) {
    console.log(
      `- the contracts alone (eventsource-parser, an event per delta through for await, a JSON line per message): ${ratio(ratioToFloor(contract, cells.get('floor'), 'cpuMs'))}; Kode over them: ${ratio(ratioToFloor(kode, contract, 'cpuMs'))}`,
    )
  }
  const first = perTurn(kode, 2, 6)
  const last = perTurn(kode, TURNS - 5, TURNS - 1)
  console.log(`- per-turn CPU, turns 45-49 over turns 2-6: ${ratio(last / first)}`)
}
