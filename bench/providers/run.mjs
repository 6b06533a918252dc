// The providers benchmark: every client reads the same local SSE streams, each run in a fresh
// node process, and the medians print as Markdown tables with ratios to the floor.
// Run: pnpm bench [--quick] (see --help and docs/benchmarks.md).
import { writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { measureImports } from './imports.mjs'
import { kodeBuildWarning } from './kode-build.mjs'
import { parseOptions, USAGE } from './options.mjs'
import { printResults } from './report.mjs'
import { measureCells } from './rounds.mjs'
import { startServerProcess } from './server-control.mjs'

const options = parseOptions(process.argv.slice(2))
if (options.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
// Progress goes to stderr, so stdout holds only the tables.
const log = (line) => process.stderr.write(`${line}\n`)

const warning = options.clients.some((c) => c.startsWith('kode')) ? kodeBuildWarning() : undefined
if (warning) log(`warning: ${warning}`)

const started = performance.now()
// Other work on the machine skews every figure; the tables say how busy it was.
const loadBefore = loadavg()[0]
const server = await startServerProcess()
let cells
try {
  cells = await measureCells(options, server.origin, log)
} finally {
  await server.stop()
}
const imports = await measureImports(options, log)
log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`)

printResults({ options, cells, imports, warning, load: [loadBefore, loadavg()[0]] })
if (options.json) {
  writeFileSync(options.json, JSON.stringify({ options, cells: Object.fromEntries(cells), imports }, null, 2))
}
