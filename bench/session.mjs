// Session benchmarks: appending to the file store, loading + replaying a long session, and
// exporting one as HTML. Each measurement runs in its own node process so its peak RSS is its own.
// Run: pnpm --filter @kode/protocol --filter @kode/session build && node bench/session.mjs
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { realisticHistory } from './lib/history-fixture.mjs'
import { printTable } from './lib/report.mjs'

const self = fileURLToPath(import.meta.url)
const session = () => import('../packages/session/dist/index.js')

/** Measurements, each run in a fresh process by `measure`. */
const scenarios = {
  /** Appends `n` records to a new session, `batch` records per append. */
  async append({ n, batch, fsync }) {
    const { createFileSessionStore } = await session()
    const history = realisticHistory(n)
    const dir = mkdtempSync(join(tmpdir(), 'kode-bench-'))
    const store = createFileSessionStore({ dir, fsync })
    await store.create({ id: 'bench' })
    const start = process.hrtime.bigint()
    for (let i = 0; i < n; i += batch) await store.append('bench', history.slice(i, i + batch))
    await store.close()
    const seconds = Number(process.hrtime.bigint() - start) / 1e9
    const bytes = statSync(join(dir, 'bench', 'history.jsonl')).size
    rmSync(dir, { recursive: true, force: true })
    return { seconds, bytes }
  },

  /** Writes an `n`-record session into `dir` (in its own process, so it does not count below). */
  async prepare({ n, dir, ascii }) {
    const { createFileSessionStore } = await session()
    const writer = createFileSessionStore({ dir, fsync: false })
    await writer.create({ id: 'bench' })
    const history = ascii ? asciiOnly(realisticHistory(n)) : realisticHistory(n)
    for (let i = 0; i < n; i += 1000) await writer.append('bench', history.slice(i, i + 1000))
    await writer.close()
    return {}
  },

  /** Times reading a prepared session back and deriving its replay. */
  async replay({ dir }) {
    const { createFileSessionStore, deriveReplayEvents } = await session()
    global.gc?.()
    const baseline = process.memoryUsage()
    const store = createFileSessionStore({ dir })
    const start = process.hrtime.bigint()
    const history = await store.read('bench')
    const loaded = process.hrtime.bigint()
    const events = deriveReplayEvents(history, { sessionId: 'bench' })
    const done = process.hrtime.bigint()
    global.gc?.()
    const retained = process.memoryUsage()
    await store.close()
    return {
      readSeconds: Number(loaded - start) / 1e9,
      replaySeconds: Number(done - loaded) / 1e9,
      events: events.length,
      bytes: statSync(join(dir, 'bench', 'history.jsonl')).size,
      retainedHeap: retained.heapUsed - baseline.heapUsed,
    }
  },

  /** The floor under `replay`: the same file read whole and JSON.parse'd line by line, no validation. */
  async floor({ dir }) {
    const start = process.hrtime.bigint()
    const lines = readFileSync(join(dir, 'bench', 'history.jsonl'), 'utf8').split('\n')
    lines.pop()
    const parsed = lines.map((line) => JSON.parse(line))
    return { seconds: Number(process.hrtime.bigint() - start) / 1e9, records: parsed.length }
  },

  /** Renders an `n`-message session as HTML. */
  async export({ n }) {
    const { exportHtml } = await session()
    const history = realisticHistory(n)
    const start = process.hrtime.bigint()
    const page = exportHtml(history, { title: 'bench' })
    const seconds = Number(process.hrtime.bigint() - start) / 1e9
    return { seconds, bytes: Buffer.byteLength(page) }
  },
}

if (process.argv[2] === 'child') {
  const [name, json] = process.argv.slice(3)
  const result = await scenarios[name](JSON.parse(json))
  const usage = process.resourceUsage()
  process.stdout.write(JSON.stringify({ ...result, peakRss: usage.maxRSS * 1024 }))
} else {
  await main()
}

function measure(name, params) {
  const child = spawnSync(process.execPath, ['--expose-gc', self, 'child', name, JSON.stringify(params)], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  })
  if (child.status !== 0) throw new Error(`${name} ${JSON.stringify(params)} failed:\n${child.stderr}`)
  return JSON.parse(child.stdout)
}

async function main() {
  const rows = [['appends', 'records per append', 'fsync', 'records/s', 'MB/s', 'peak RSS']]
  for (const [n, batch, fsync] of [
    [100_000, 1, false],
    [100_000, 8, true],
    [10_000, 1, true],
  ]) {
    const r = measure('append', { n, batch, fsync })
    rows.push([
      fmt(n / batch),
      batch,
      fsync ? 'on' : 'off',
      fmt(n / r.seconds),
      (r.bytes / 1e6 / r.seconds).toFixed(0),
      mb(r.peakRss),
    ])
  }
  printTable('append to the file store (realistic records, ~1.2 kB each)', rows)

  const replayRows = [
    [
      'records',
      'text',
      'file',
      'read records/s',
      'replay records/s',
      'load + replay records/s',
      'floor: readFile + JSON.parse records/s',
      'retained heap',
      'peak RSS',
    ],
  ]
  for (const [n, ascii] of [
    [25_000, false],
    [50_000, false],
    [100_000, false],
    [100_000, true],
  ]) {
    const dir = mkdtempSync(join(tmpdir(), 'kode-bench-'))
    measure('prepare', { n, dir, ascii })
    const r = measure('replay', { dir })
    const floor = measure('floor', { dir })
    rmSync(dir, { recursive: true, force: true })
    replayRows.push([
      fmt(n),
      ascii ? 'ASCII only' : 'non-ASCII in each',
      mb(r.bytes),
      fmt(n / r.readSeconds),
      fmt(n / r.replaySeconds),
      fmt(n / (r.readSeconds + r.replaySeconds)),
      fmt(n / floor.seconds),
      mb(r.retainedHeap),
      mb(r.peakRss),
    ])
  }
  printTable('load (store.read) + replay (deriveReplayEvents) of a file-store session', replayRows)

  const exportRows = [['messages', 'seconds', 'messages/s', 'HTML', 'peak RSS']]
  const r = measure('export', { n: 10_000 })
  exportRows.push([fmt(10_000), r.seconds.toFixed(2), fmt(10_000 / r.seconds), mb(r.bytes), mb(r.peakRss)])
  printTable('exportHtml', exportRows)
}

/** The same history with every non-ASCII character replaced, to measure the ASCII read path. */
function asciiOnly(history) {
  return JSON.parse(JSON.stringify(history).replace(/[\u0080-\uffff]/g, '-'))
}

function fmt(n) {
  return Math.round(n).toLocaleString('en-US')
}

function mb(bytes) {
  return `${(bytes / 1e6).toFixed(0)} MB`
}
