// Reading the same streams again in one warm process: what each way of reading with
// @kode/providers costs once V8 has optimized it, beside the floor. The fresh-process tables of
// run.mjs measure a process's first response; this measures the steady state of a long-lived one.
// Run: pnpm --filter "@kode/providers..." build && node bench/providers/warm.mjs
import { printTable } from '../lib/report.mjs'
import { prepare as prepareFloor } from './clients/floor.mjs'
import { prepareKode } from './clients/kode.mjs'
import { SCENARIOS } from './scenarios.mjs'
import { startServerProcess } from './server-control.mjs'
import { warmHttpParser } from './warm-up.mjs'
import { WIRE_NAMES } from './wires/index.mjs'

const WARM_ROUNDS = 4
const ROUNDS = 9

const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1]

const server = await startServerProcess()
try {
  await warmHttpParser(server.origin)
  const rows = [['scenario', 'wire', 'floor CPU ms', '@kode/providers vs floor', 'readBatches vs floor']]
  for (const scenario of SCENARIOS) {
    for (const wire of WIRE_NAMES) {
      const setup = { wire, origin: server.origin, scenario }
      const runs = {
        floor: await prepareFloor(setup),
        kode: await prepareKode(setup, false),
        batches: await prepareKode(setup, true),
      }
      const ratios = { kode: [], batches: [] }
      const floors = []
      for (let round = 0; round < WARM_ROUNDS + ROUNDS; round++) {
        const took = {}
        // Rotated order, so no way of reading always runs right after the same one.
        const order = ['floor', 'kode', 'batches']
        for (let i = 0; i < round % 3; i++) order.push(order.shift())
        for (const name of order) {
          const start = cpuMs()
          await runs[name]()
          took[name] = cpuMs() - start
        }
        if (round < WARM_ROUNDS) continue
        floors.push(took.floor)
        ratios.kode.push(took.kode / took.floor)
        ratios.batches.push(took.batches / took.floor)
      }
      rows.push([
        scenario,
        wire,
        median(floors).toFixed(1),
        `${median(ratios.kode).toFixed(2)}x`,
        `${median(ratios.batches).toFixed(2)}x`,
      ])
    }
  }
  printTable(
    `warm process: CPU per stream after ${WARM_ROUNDS} warm-up rounds, median of ${ROUNDS} rounds`,
    rows,
  )
} finally {
  await server.stop()
}
