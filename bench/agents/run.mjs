// The agents benchmark: the same scripted 50-turn task (parallel tool calls, text and tool-call
// streams from one local Chat Completions server) run by each agent loop and by a hand-written
// fetch loop (the floor), each run in a fresh node process, in shuffled rounds; medians and
// ratios to the floor print as Markdown tables.
// Run: pnpm bench:agents [--quick] (see --help and docs/benchmarks.md).
import { writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { kodeBuildWarning } from '../providers/kode-build.mjs'
import { startServerProcess } from '../providers/server-control.mjs'
import { parseOptions, USAGE } from './options.mjs'
import { printResults } from './report.mjs'
import { measureClients } from './rounds.mjs'

const options = parseOptions(process.argv.slice(2))
if (options.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
// Progress goes to stderr, so stdout holds only the tables.
const log = (line) => process.stderr.write(`${line}\n`)

const warnings = options.clients.includes('kode')
  ? ['protocol', 'providers', 'session', 'core'].map((name) => kodeBuildWarning(name)).filter(Boolean)
  : []
for (const warning of warnings) log(`warning: ${warning}`)

const started = performance.now()
const loadBefore = loadavg()[0]
const server = await startServerProcess(new URL('./server-process.mjs', import.meta.url))
let cells
try {
  cells = await measureClients(options, server.origin, log)
} finally {
  await server.stop()
}
log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`)

printResults({ options, cells, warnings, load: [loadBefore, loadavg()[0]] })
if (options.json)
  writeFileSync(options.json, JSON.stringify({ options, cells: Object.fromEntries(cells) }, null, 2))
