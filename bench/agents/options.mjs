// The agents benchmark's command line.
import { parseArgs } from 'node:util'
import { CLIENT_NAMES } from './clients/index.mjs'

/** Usage text, printed by --help. */
export const USAGE = `Usage: node bench/agents/run.mjs [options]

  --quick              smoke run: 1 round
  --runs N             rounds: fresh-process runs per client (default 7; medians are reported)
  --clients a,b        subset of: ${CLIENT_NAMES.join(', ')} (the floor always runs)
  --warm               run the task once unmeasured in each process first (steady state, no JIT warm-up)
  --json FILE          also write every run's figures to FILE
`

/** Parses `argv` (without node and the script) into the run's settings. */
export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      runs: { type: 'string' },
      clients: { type: 'string' },
      warm: { type: 'boolean', default: false },
      json: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  let clients = CLIENT_NAMES
  if (values.clients !== undefined) {
    const picked = values.clients.split(',').filter(Boolean)
    const unknown = picked.filter((name) => !CLIENT_NAMES.includes(name))
    if (unknown.length > 0) throw new Error(`unknown client: ${unknown.join(', ')}\n\n${USAGE}`)
    // Every ratio is to the floor, so it always runs; table order whatever order they came in.
    clients = CLIENT_NAMES.filter((name) => name === 'floor' || picked.includes(name))
  }
  let runs = values.quick ? 1 : 7
  if (values.runs !== undefined) {
    runs = Number(values.runs)
    if (!Number.isInteger(runs) || runs < 1)
      throw new Error(`--runs takes a positive integer, got ${values.runs}`)
  }
  return { help: values.help, runs, clients, warm: values.warm, json: values.json }
}
