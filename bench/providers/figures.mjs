// What the tables show, computed from a cell's runs (see rounds.mjs for how runs are taken).
import { median } from '../lib/report.mjs'

/** Medians of a cell's CPU, wall and peak RSS, or undefined when it has no figures. */
export function medians(cell) {
  if (cell.status !== 'ok' || cell.runs.length === 0) return undefined
  return {
    cpuMs: median(cell.runs.map((r) => r.cpuMs)),
    wallMs: median(cell.runs.map((r) => r.wallMs)),
    maxRssKb: median(cell.runs.map((r) => r.maxRssKb)),
  }
}

/**
 * `cell`'s `field` over the floor's: in each round, the client's figure over the mean of the
 * floor runs of that round; the median over rounds. Undefined when no round has both.
 */
export function ratioToFloor(cell, floor, field) {
  const ratios = []
  for (const run of cell.runs) {
    const same = floor.runs.filter((f) => f.round === run.round)
    if (same.length > 0) ratios.push(run[field] / (same.reduce((sum, f) => sum + f[field], 0) / same.length))
  }
  return ratios.length > 0 ? median(ratios) : undefined
}

/**
 * The floor's A/A ratio: its last run of each round over its first, CPU, median over rounds.
 * The same code twice, so how far this strays from 1.00x is how far noise alone moves a ratio.
 */
export function floorAA(floor) {
  const ratios = []
  for (const last of floor.runs.filter((r) => r.position === 'last')) {
    const first = floor.runs.find((r) => r.round === last.round && r.position === 'first')
    if (first) ratios.push(last.cpuMs / first.cpuMs)
  }
  return ratios.length > 0 ? median(ratios) : undefined
}
