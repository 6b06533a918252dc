// Runs every client once per round, each in a fresh process: the floor first, the others in a
// shuffled order (seeded, so it repeats), the floor again. A client's ratio in a round is over the
// mean of that round's two floor runs, so slow drift on a shared machine cancels.
import { measure } from '../providers/measure.mjs'
import { shuffled } from '../providers/shuffle.mjs'
import { CLIENTS } from './clients/index.mjs'

/**
 * Resolves to a Map from client name to its cell: its runs (each with its `round` and, for the
 * floor, `position`), its `status` (ok, n/a, error, wrong) and a `note` saying why it has no figures.
 */
export async function measureClients(options, origin, log) {
  const cells = new Map(
    options.clients.map((client) => [client, { runs: [], status: 'ok', note: undefined }]),
  )
  const others = options.clients.filter((client) => client !== 'floor')
  const args = options.warm ? ['warm'] : []

  const runOnce = async (client, round, extra = {}) => {
    const cell = cells.get(client)
    if (cell.status !== 'ok') return
    const report = await measure('../agents/worker.mjs', [client, origin, ...args])
    if (report.unavailable) {
      Object.assign(cell, { status: 'n/a', note: report.unavailable })
    } else if (report.error || report.wrong) {
      // A client that fails the task is reported as such, never timed.
      Object.assign(cell, { status: report.error ? 'error' : 'wrong', note: report.error ?? report.wrong })
    } else {
      cell.runs.push({ round, ...extra, ...report })
      return
    }
    log(`  ${CLIENTS[client].label}: ${cell.status}: ${cell.note.split('\n')[0]}`)
  }

  for (let round = 1; round <= options.runs; round++) {
    log(`round ${round}/${options.runs}`)
    await runOnce('floor', round, { position: 'first' })
    for (const client of shuffled(others, round)) await runOnce(client, round)
    await runOnce('floor', round, { position: 'last' })
  }
  return cells
}
