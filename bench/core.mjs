// Core engine benchmark: one 50-turn task with a tool call per turn against a local scripted model
// (openai-chat wire, served from its own process). It reports the engine's CPU beyond the provider
// streams it consumed: the providers-only baseline replays the very same 50 requests through
// client.stream alone. The engine's cost is the difference, for the whole task and per turn
// (turn 1 against turn 50: the cost per turn should stay flat as the history grows).
//
// Each side is measured in a process of its own (same warm-up, same requests), so neither is
// billed for the other's garbage or JIT state.
// Run: pnpm build && node bench/core.mjs
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createAgent, defineTool } from '../packages/core/dist/index.js'
import { createClient } from '../packages/providers/dist/index.js'
import { createFileSessionStore } from '../packages/session/dist/file.js'
import { createMemorySessionStore } from '../packages/session/dist/index.js'
import { median, printTable } from './lib/report.mjs'

// TypeBox is a dependency of the packages, not of the workspace root: take core's.
const { Type } = createRequire(new URL('../packages/core/package.json', import.meta.url))('@sinclair/typebox')

const TURNS = 50
const WARMUP = 3
const ROUNDS = 15
const RESULT = 'result line of the lookup tool\n'.repeat(64)
const STORES = ['memory', 'file']

const [mode, side, storeKind, url] = process.argv.slice(2)
if (mode === 'measure') await measure(side, storeKind, url)
else await orchestrate()

async function orchestrate() {
  const server = spawn(
    process.execPath,
    [fileURLToPath(new URL('./lib/core-server.mjs', import.meta.url)), String(TURNS)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  )
  const url = await new Promise((resolve) => {
    createInterface({ input: server.stdout }).on('line', (line) => {
      if (line.startsWith('ready ')) resolve(line.slice(6))
    })
  })
  const run = async (side, store) => {
    const args = [fileURLToPath(import.meta.url), 'measure', side, store, url]
    const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 })
    return JSON.parse(stdout)
  }
  const rows = []
  for (const store of STORES)
    rows.push({ store, engine: await run('engine', store), providers: await run('providers', store) })
  server.stdin.end()

  const ms = (n) => n.toFixed(2)
  const label = { memory: 'memory store', file: 'file store (fsync off)' }
  printTable(
    `core engine, one ${TURNS}-turn task (a tool call per turn, ~120 text deltas per response), CPU ms, median of ${ROUNDS}`,
    [
      ['store', 'events', 'engine task', 'providers only', 'ratio', 'engine extra', 'extra per event (µs)'],
      ...rows.map(({ store, engine, providers }) => {
        const extra = engine.total - providers.total
        return [
          label[store],
          engine.events,
          ms(engine.total),
          ms(providers.total),
          `${(engine.total / providers.total).toFixed(2)}x`,
          ms(extra),
          ((extra * 1000) / engine.events).toFixed(2),
        ]
      }),
    ],
  )
  const perTurn = ({ engine, providers }, turns) =>
    median(turns.map((t) => engine.perTurn[t] - providers.perTurn[t]))
  const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from - 1 + i)
  printTable(
    'engine CPU beyond the provider stream, per turn (ms; median over rounds, then over the turns)',
    [
      ['store', 'turn 1', 'turn 50', 'turns 1-5', 'turns 45-49'],
      ...rows.map((row) => [
        label[row.store],
        ms(perTurn(row, [0])),
        ms(perTurn(row, [TURNS - 1])),
        ms(perTurn(row, range(1, 5))),
        ms(perTurn(row, range(45, 49))),
      ]),
    ],
  )
}

/** One side in this process: prints `{ total, perTurn, events }`, medians over the rounds. */
async function measure(side, storeKind, url) {
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks something up',
    parameters: Type.Object({ query: Type.String() }),
    execute: () => RESULT,
  })
  const dirs = []
  const newStore = () => {
    if (storeKind === 'memory') return createMemorySessionStore()
    const dir = mkdtempSync(join(tmpdir(), 'kode-bench-core-'))
    dirs.push(dir)
    return createFileSessionStore({ dir, fsync: false })
  }
  const newClient = () =>
    createClient({ api: 'openai-chat', model: 'gpt-4o', apiKey: 'sk-bench-0123456789', baseUrl: url })
  const cpuMs = (since) => {
    const { user, system } = process.cpuUsage(since)
    return (user + system) / 1000
  }

  const engineTask = async (client) => {
    const store = newStore()
    const agent = createAgent({
      client,
      store,
      tools: [lookup],
      system: 'You look things up.',
      maxTurns: TURNS,
    })
    const perTurn = []
    let turnStart
    agent.events.on('turn_start', () => {
      turnStart = process.cpuUsage()
    })
    agent.events.on('turn_end', () => perTurn.push(cpuMs(turnStart)))
    const start = process.cpuUsage()
    let events = 0
    const run = agent.run('Look up fifty things, one at a time.')
    for await (const _ of run) events++
    const total = cpuMs(start)
    if ((await run.done).reason !== 'completed' || perTurn.length !== TURNS)
      throw new Error('the task did not complete')
    await store.close()
    return { total, perTurn, events }
  }
  const providersTask = async (client, requests) => {
    const perTurn = []
    const start = process.cpuUsage()
    for (const request of requests) {
      const t = process.cpuUsage()
      for await (const _ of client.stream(request)) {
      }
      perTurn.push(cpuMs(t))
    }
    return { total: cpuMs(start), perTurn, events: 0 }
  }

  // Both sides record the engine's requests once, which also warms the same code up.
  const recorder = newClient()
  const requests = []
  await engineTask({
    ...recorder,
    stream: (request, options) => {
      requests.push(request)
      return recorder.stream(request, options)
    },
  })

  const rounds = []
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const client = newClient()
    const result = side === 'engine' ? await engineTask(client) : await providersTask(client, requests)
    if (round >= WARMUP) rounds.push(result)
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  const perTurn = Array.from({ length: TURNS }, (_, t) => median(rounds.map((r) => r.perTurn[t])))
  process.stdout.write(
    JSON.stringify({ total: median(rounds.map((r) => r.total)), perTurn, events: rounds[0].events }),
  )
}
