// The benchmark's output: one Markdown table per scenario, one for cold imports, and how
// @kode/providers stands against its targets.
import { cpus } from 'node:os'
import { median, printTable } from '../lib/report.mjs'
import { CLIENTS } from './clients/index.mjs'
import { floorAA, medians, ratioToFloor } from './figures.mjs'
import { TEXT_DELTAS, TOOL_FRAGMENTS } from './scenarios.mjs'

/** @kode/providers' targets, from the providers issues. */
export const TARGETS = { cpuRatio: 1.15, importMs: 25, rssDeltaMb: 10 }

const TITLES = {
  text: `text: ${TEXT_DELTAS.toLocaleString('en-US')} text deltas`,
  tool: `tool call: arguments in ${TOOL_FRAGMENTS.toLocaleString('en-US')} fragments`,
}
const HEADER = [
  'wire',
  'client',
  'CPU ms',
  'CPU vs floor',
  'wall ms',
  'wall vs floor',
  'peak RSS MB',
  'RSS vs floor MB',
]

const ms = (n) => n.toFixed(0)
const mb = (kb) => (kb / 1024).toFixed(1)
const ratio = (n) => (n === undefined ? '' : `${n.toFixed(2)}x`)
const signed = (n) => (n === undefined ? '' : `${n >= 0 ? '+' : ''}${n.toFixed(1)}`)

function machine() {
  const [first] = cpus()
  return `Node ${process.version}, ${process.platform} ${process.arch}, ${cpus().length} x ${first?.model.trim() ?? 'unknown CPU'}`
}

/** Prints every table to stdout, with footnotes for cells that have no figures. */
export function printResults({ options, cells, imports, warning, load }) {
  console.log(
    `${machine()}; 1-minute load average ${load[0].toFixed(2)} before, ${load[1].toFixed(2)} after.`,
  )
  console.log(`Median of ${options.runs} fresh-process run(s) per cell, ${options.importRuns} per import.`)
  if (warning) console.log(`\nwarning: ${warning}`)
  // Both ways of reading with @kode/providers are held to its targets.
  const kode = {}
  for (const client of KODE_CLIENTS) kode[client] = { cells: [], failures: [], importMs: undefined, aa: [] }
  const contract = []
  for (const scenario of options.scenarios) printScenario(scenario, options, cells, kode, contract)
  printImports(imports, kode)
  for (const client of KODE_CLIENTS) {
    if (options.clients.includes(client)) printTargets(CLIENTS[client].label, kode[client], contract)
  }
}

const KODE_CLIENTS = ['kode', 'kode-batches']

/** One scenario's table: a row per wire and client. */
function printScenario(scenario, options, cells, kode, contract) {
  const rows = [HEADER]
  const notes = []
  const aa = []
  for (const wire of options.wires) {
    const floorCell = cells.get(`${scenario} ${wire} floor`)
    const floor = medians(floorCell)
    const floorRatio = floorAA(floorCell)
    if (floorRatio !== undefined) {
      aa.push(`${wire} ${ratio(floorRatio)}`)
      for (const client of KODE_CLIENTS) kode[client].aa.push(floorRatio)
    }
    for (const client of options.clients) {
      const cell = cells.get(`${scenario} ${wire} ${client}`)
      const label = CLIENTS[client].label
      const m = medians(cell)
      if (!m) {
        let mark = 'n/a'
        if (cell.status !== 'n/a') {
          notes.push(`[${notes.length + 1}] ${wire}, ${label}: ${cell.note.split('\n')[0]}`)
          mark = `${cell.status} [${notes.length}]`
          kode[client]?.failures.push(`${scenario} ${wire}`)
        }
        rows.push([wire, label, mark, '', '', '', '', ''])
        continue
      }
      const isFloor = client === 'floor'
      const cpuRatio = isFloor ? 1 : ratioToFloor(cell, floorCell, 'cpuMs')
      const wallRatio = isFloor ? 1 : ratioToFloor(cell, floorCell, 'wallMs')
      const rssDeltaMb = floor ? (m.maxRssKb - floor.maxRssKb) / 1024 : undefined
      // Against the floor that also hands out an item per delta: what the library adds over
      // the cost of the `for await` contract itself.
      const itemsCell = cells.get(`${scenario} ${wire} floor-items`)
      const overItems =
        itemsCell && client !== 'floor-items' ? ratioToFloor(cell, itemsCell, 'cpuMs') : undefined
      kode[client]?.cells.push({ name: `${scenario} ${wire}`, cpuRatio, rssDeltaMb, overItems })
      if (client === 'floor-items') contract.push({ name: `${scenario} ${wire}`, cpuRatio })
      rows.push([
        wire,
        label,
        ms(m.cpuMs),
        ratio(cpuRatio),
        ms(m.wallMs),
        ratio(wallRatio),
        mb(m.maxRssKb),
        signed(rssDeltaMb),
      ])
    }
  }
  printTable(`### ${TITLES[scenario]}`, rows)
  if (aa.length > 0)
    console.log(`\nA/A, the floor's second run of each round over its first (CPU, median): ${aa.join(', ')}`)
  if (notes.length > 0) console.log(`\n${notes.join('\n')}`)
}

function printImports(imports, kode) {
  const rows = [['library', 'cold import ms']]
  for (const entry of imports) {
    rows.push([entry.label, entry.failure ?? ms(median(entry.runs))])
    // One import serves both ways of reading.
    if (entry.client === 'kode' && !entry.failure) {
      for (const client of KODE_CLIENTS) kode[client].importMs = median(entry.runs)
    }
  }
  printTable('### cold import (fresh process, time to `await import(...)`)', rows)
}

function printTargets(label, kode, contract) {
  if (kode.cells.length === 0 && kode.failures.length === 0) {
    console.log(`\n${label} targets: n/a (not built)`)
    return
  }
  const worst = (field) =>
    kode.cells.reduce((a, b) => ((b[field] ?? 0) > (a?.[field] ?? 0) ? b : a), undefined)
  const cpu = worst('cpuRatio')
  const rss = worst('rssDeltaMb')
  const verdict = (ok) => (ok ? 'met' : 'MISSED')
  const noise = Math.max(...kode.aa.map((r) => Math.abs(r - 1)))
  console.log(`\n${label} targets:`)
  console.log(
    `- CPU within ${TARGETS.cpuRatio}x of the floor in every cell: ${verdict(kode.failures.length === 0 && (cpu?.cpuRatio ?? 0) <= TARGETS.cpuRatio)} (worst ${ratio(cpu?.cpuRatio)}, ${cpu?.name}; A/A noise on this run up to ${(noise * 100).toFixed(0)}%)`,
  )
  console.log(
    `- peak RSS within ${TARGETS.rssDeltaMb} MB of the floor: ${verdict((rss?.rssDeltaMb ?? 0) <= TARGETS.rssDeltaMb)} (worst ${signed(rss?.rssDeltaMb)} MB, ${rss?.name})`,
  )
  if (contract.length > 0) {
    const over = worst('overItems')
    const least = contract.reduce((a, b) => (b.cpuRatio > a.cpuRatio ? b : a))
    console.log(
      `- of that, the item-per-delta contract alone (${CLIENTS['floor-items'].label}): up to ${ratio(least.cpuRatio)} (${least.name}); ${label} over it: up to ${ratio(over?.overItems)} (${over?.name})`,
    )
  }
  console.log(
    kode.importMs === undefined
      ? '- cold import: n/a'
      : `- cold import under ${TARGETS.importMs} ms: ${verdict(kode.importMs < TARGETS.importMs)} (${ms(kode.importMs)} ms)`,
  )
  if (kode.failures.length > 0) console.log(`- cells without figures: ${kode.failures.join(', ')}`)
}
