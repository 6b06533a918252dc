// Measures every (scenario, wire, client) cell, one fresh process per run.
//
// This machine's speed drifts from second to second (a shared VM), by more than the 15% a
// target cares about. So runs go in rounds; in each round every (scenario, wire) group runs
// back to back as floor, the other clients in shuffled order, floor again. A client's ratio in a
// round is its figure over the mean of the two floor runs bracketing it, and the table reports
// the median ratio over rounds; the two floor runs of a round also tell how noisy that was.
import { CLIENTS } from './clients/index.mjs'
import { measure } from './measure.mjs'
import { shuffled } from './shuffle.mjs'

/**
 * Runs `options.runs` rounds against the server at `origin`. Resolves to a Map from
 * `"<scenario> <wire> <client>"` to the cell: its runs (each with its `round` and `sequence`,
 * the order it ran in; the floor's also with `position`, first or last), its `status` (ok, n/a,
 * error, wrong) and a `note` saying why it has no figures.
 */
export async function measureCells(options, origin, log) {
  const cells = new Map()
  const groups = []
  for (const scenario of options.scenarios) {
    for (const wire of options.wires) {
      groups.push({ scenario, wire })
      for (const client of options.clients) cells.set(`${scenario} ${wire} ${client}`, newCell())
    }
  }
  const others = options.clients.filter((client) => client !== 'floor')
  const unavailable = new Map()
  let sequence = 0

  const runOnce = async ({ scenario, wire }, client, round, extra = {}) => {
    const key = `${scenario} ${wire} ${client}`
    const cell = cells.get(key)
    if (cell.status !== 'ok' || unavailable.has(client)) return
    const report = await measure('./worker.mjs', [
      client,
      wire,
      scenario,
      origin,
      options.coldParser ? 'cold' : 'warm',
    ])
    sequence++
    if (report.unavailable) {
      unavailable.set(client, report.unavailable)
      log(`  ${CLIENTS[client].label}: n/a (${report.unavailable})`)
    } else if (report.error || report.wrong) {
      // A failing cell stays failed: figures from its other runs would not be comparable.
      cell.status = report.error ? 'error' : 'wrong'
      cell.note = report.error ?? report.wrong
      log(`  ${key}: ${cell.status}: ${cell.note}`)
    } else {
      cell.runs.push({ round, sequence, ...extra, ...report })
    }
  }

  for (let round = 1; round <= options.runs; round++) {
    log(`round ${round}/${options.runs}`)
    for (const group of shuffled(groups, round)) {
      await runOnce(group, 'floor', round, { position: 'first' })
      for (const client of shuffled(others, round * 31 + groups.indexOf(group))) {
        await runOnce(group, client, round)
      }
      await runOnce(group, 'floor', round, { position: 'last' })
    }
  }
  for (const [key, cell] of cells) {
    const client = key.split(' ')[2]
    if (unavailable.has(client)) Object.assign(cell, { status: 'n/a', note: unavailable.get(client) })
  }
  return cells
}

function newCell() {
  return { runs: [], status: 'ok', note: undefined }
}
