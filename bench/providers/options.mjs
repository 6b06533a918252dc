// The runner's command line.
import { parseArgs } from 'node:util'
import { CLIENT_NAMES } from './clients/index.mjs'
import { SCENARIOS } from './scenarios.mjs'
import { WIRE_NAMES } from './wires/index.mjs'

/** Usage text, printed by --help. */
export const USAGE = `Usage: node bench/providers/run.mjs [options]

  --quick              smoke run: 1 run per cell, 1 per import
  --runs N             fresh-process runs per cell (default 7; medians are reported)
  --import-runs N      fresh-process runs per cold import (default 7)
  --clients a,b        subset of: ${CLIENT_NAMES.join(', ')} (the floor always runs)
  --wires a,b          subset of: ${WIRE_NAMES.join(', ')}
  --scenarios a,b      subset of: ${SCENARIOS.join(', ')}
  --cold-parser        skip the HTTP parser warm-up before each measured run
  --json FILE          also write every run's figures to FILE
`

function list(value, allowed, what) {
  if (value === undefined) return allowed
  const picked = value.split(',').filter(Boolean)
  const unknown = picked.filter((name) => !allowed.includes(name))
  if (unknown.length > 0) throw new Error(`unknown ${what}: ${unknown.join(', ')}\n\n${USAGE}`)
  // Keep table order whatever order they were given in.
  return allowed.filter((name) => picked.includes(name))
}

function count(value, fallback, what) {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${what} takes a positive integer, got ${value}`)
  return n
}

/** Parses `argv` (without node and the script) into the run's settings. */
export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      runs: { type: 'string' },
      'import-runs': { type: 'string' },
      clients: { type: 'string' },
      wires: { type: 'string' },
      scenarios: { type: 'string' },
      json: { type: 'string' },
      'cold-parser': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  })
  const clients = list(values.clients, CLIENT_NAMES, 'client')
  return {
    help: values.help,
    runs: count(values.runs, values.quick ? 1 : 7, 'runs'),
    importRuns: count(values['import-runs'], values.quick ? 1 : 7, 'import-runs'),
    // Every ratio is to the floor, so it always runs.
    clients: clients.includes('floor') ? clients : ['floor', ...clients],
    wires: list(values.wires, WIRE_NAMES, 'wire'),
    scenarios: list(values.scenarios, SCENARIOS, 'scenario'),
    json: values.json,
    coldParser: values['cold-parser'],
  }
}
