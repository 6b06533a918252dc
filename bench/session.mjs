// Session benchmarks: appending to the file store, loading + replaying a long session, and
// exporting one as HTML. Each measurement runs in its own node process so its peak RSS is its own.
// Run: pnpm --filter @kode/protocol --filter @kode/session build && node bench/session.mjs [sections]
// where sections are any of `append`, `append-cpu`, `load`, `steps`, `export` (default: all),
// and `--rounds=N` sets the load table's interleaved rounds (default 5).
import { isAscii } from 'node:buffer'
import { spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PerformanceObserver } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { mixedSizeHistory, realisticHistory } from './lib/history-fixture.mjs'
import { median, printTable } from './lib/report.mjs'

const self = fileURLToPath(import.meta.url)
const session = async () => ({
  ...(await import('../packages/session/dist/index.js')),
  ...(await import('../packages/session/dist/file.js')),
})
const protocol = () => import('../packages/protocol/dist/index.js')
/**
 * Fresh-process runs per step of the steps table. The figures are those of the fastest run: on a
 * shared machine the slower runs measure the other work on it (wall time there can be twice the
 * CPU time), and the fastest is the closest to what the code itself costs.
 */
const RUNS = 5
const fastest = (runs, time) => runs.reduce((best, run) => (time(run) < time(best) ? run : best))

/** The fixtures of the load table: `realisticHistory` (pessimistic) and `mixedSizeHistory`. */
const fixtures = {
  uniform: (n) => realisticHistory(n),
  'uniform-ascii': (n) => asciiOnly(realisticHistory(n)),
  mixed: (n) => mixedSizeHistory(n),
}
const fixtureLabel = {
  uniform: '~1.2 kB each, non-ASCII in most',
  'uniform-ascii': '~1.2 kB each, ASCII only',
  mixed: 'mixed sizes (p50 0.8 kB, p99 12 kB), non-ASCII in 1 of 20',
}

/** CPU (user + system, all threads), page faults, wall time and GC pause time since `start()`. */
/**
 * Runs `read(store, meter)` on a file store over `dir`, which resolves to its figures and what it
 * keeps (`{ figures, kept }`), and adds the GC pauses up to its end (and one tick after) and the
 * heap that what it keeps still holds.
 */
async function measureStoreRead(dir, read) {
  const { createFileSessionStore } = await session()
  global.gc?.()
  const baseline = process.memoryUsage()
  const store = createFileSessionStore({ dir })
  const m = meter()
  const { figures, kept } = await read(store, m)
  await tick()
  const gcMs = m.gcSince()
  m.stop()
  global.gc?.()
  const retained = process.memoryUsage()
  await store.close()
  // Read `kept` after the heap is measured, so that it is still alive then.
  return { ...figures, kept: kept?.length ?? 0, gcMs, retainedHeap: retained.heapUsed - baseline.heapUsed }
}

function meter() {
  let gcMs = 0
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration
  })
  observer.observe({ entryTypes: ['gc'] })
  const snap = () => {
    const r = process.resourceUsage()
    return {
      wall: performance.now(),
      cpu: (r.userCPUTime + r.systemCPUTime) / 1000,
      faults: r.minorPageFault,
    }
  }
  let last = snap()
  let gcAtLast = 0
  return {
    /** Figures since the previous lap (or the start); GC entries arrive late, see `settle`. */
    lap() {
      const now = snap()
      const lap = { wall: now.wall - last.wall, cpu: now.cpu - last.cpu, faults: now.faults - last.faults }
      last = now
      return lap
    },
    /** GC pause time so far (call after a tick, once the observer has been told). */
    gcSince() {
      const since = gcMs - gcAtLast
      gcAtLast = gcMs
      return since
    },
    stop: () => observer.disconnect(),
  }
}
const tick = () => new Promise((resolve) => setTimeout(resolve, 20))

/** Complete lines of `buffer` as strings, decoded as the store does (see history-file.ts). */
function* lines(buffer, pieceBytes) {
  for (let from = 0; from < buffer.length; ) {
    let to = buffer.lastIndexOf(10, Math.min(buffer.length - 1, from + pieceBytes))
    if (to < from) to = buffer.indexOf(10, from + pieceBytes)
    yield* buffer.toString(isAscii(buffer.subarray(from, to)) ? 'latin1' : 'utf8', from, to).split('\n')
    from = to + 1
  }
}

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

  /**
   * CPU per append when records come one at a time with other work between them, as the engine
   * persists each record before announcing it: each append is timed from before it to after two
   * turns of the event loop, so background work it started (a metadata write) is billed to it.
   */
  async appendCpu({ n, kind }) {
    const { createFileSessionStore, createMemorySessionStore } = await session()
    const history = realisticHistory(n)
    const turn = () => new Promise((resolve) => setTimeout(resolve, 0))
    const cpu = () => {
      const { user, system } = process.cpuUsage()
      return (user + system) / 1000
    }
    const perAppend = []
    for (let round = 0; round < 4; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'kode-bench-'))
      const store =
        kind === 'memory' ? createMemorySessionStore() : createFileSessionStore({ dir, fsync: false })
      await store.create({ id: 'bench' })
      let total = 0
      for (const record of history) {
        await turn()
        const start = cpu()
        await store.append('bench', [record])
        await turn()
        await turn()
        total += cpu() - start
      }
      await store.close()
      rmSync(dir, { recursive: true, force: true })
      // The first round warms the JIT up.
      if (round > 0) perAppend.push(total / n)
    }
    return { perAppendMs: median(perAppend) }
  },

  /** Writes an `n`-record session into `dir` (in its own process, so it does not count below). */
  async prepare({ n, dir, fixture }) {
    const { createFileSessionStore } = await session()
    const writer = createFileSessionStore({ dir, fsync: false })
    await writer.create({ id: 'bench' })
    const history = fixtures[fixture](n)
    for (let i = 0; i < n; i += 1000) await writer.append('bench', history.slice(i, i + 1000))
    await writer.close()
    return {}
  },

  /** Times reading a prepared session back and deriving its replay: wall, CPU, faults, GC. */
  async replay({ dir }) {
    const { deriveReplayEvents } = await session()
    return measureStoreRead(dir, async (store, m) => {
      const history = await store.read('bench')
      const read = m.lap()
      const events = deriveReplayEvents(history, { sessionId: 'bench' })
      const replay = m.lap()
      const bytes = statSync(join(dir, 'bench', 'history.jsonl')).size
      return { figures: { read, replay, events: events.length, bytes }, kept: [history, events] }
    })
  },

  /**
   * The floor under `replay`: the file read in the store's 1 MiB chunks, decoded in its 32 kB
   * pieces and JSON.parse'd line by line, results kept (as a load must), with no validation.
   */
  async floor({ dir }) {
    const m = meter()
    const parsed = []
    const fd = openSync(join(dir, 'bench', 'history.jsonl'), 'r')
    const buffer = Buffer.allocUnsafe(1 << 20)
    let kept = 0
    for (;;) {
      if (kept === buffer.length) throw new Error('a line longer than the read buffer')
      const read = readSync(fd, buffer, kept, buffer.length - kept, null)
      if (read === 0) break
      const end = buffer.lastIndexOf(10, kept + read - 1)
      for (const line of lines(buffer.subarray(0, end + 1), 32 * 1024)) parsed.push(JSON.parse(line))
      kept = buffer.copy(buffer, 0, end + 1, kept + read)
    }
    closeSync(fd)
    const lap = m.lap()
    m.stop()
    return { ...lap, records: parsed.length }
  },

  /**
   * Load + replay as a stream: `replaySession` over the file store, which reads through
   * `readBatches` (the store's default batch, or `batchSize`) into the incremental deriver; only
   * the events are kept.
   */
  async streamed({ dir, batchSize }) {
    const { replaySession } = await session()
    return measureStoreRead(dir, async (store, m) => {
      const events = await replaySession(store, 'bench', { batchSize })
      return { figures: { ...m.lap(), events: events.length }, kept: events }
    })
  },

  /**
   * Load + replay as a host that forwards a stored session to a UI does it: `replaySessionBatches`
   * over the file store, each batch of events handed on (here: counted) and none kept.
   */
  async forwarded({ dir, batchSize }) {
    const { replaySessionBatches } = await session()
    return measureStoreRead(dir, async (store, m) => {
      let events = 0
      for await (const batch of replaySessionBatches(store, 'bench', { batchSize })) events += batch.length
      return { figures: { ...m.lap(), events } }
    })
  },

  /**
   * One step of "where the load time goes", on the lines of a prepared file: `decode` or `parse`
   * each line, `keep` the results or drop them, after a `warm` pass or not; or `utf8` decoding of
   * the file in pieces of `pieceKiB`.
   */
  async step({ dir, op, keep, warm, pieceKiB }) {
    const { decodeHistoryEvent } = await protocol()
    const buffer = readFileSync(join(dir, 'bench', 'history.jsonl'))
    if (op === 'utf8') {
      const pieceBytes = pieceKiB * 1024
      await tick()
      const m = meter()
      for (let from = 0; from < buffer.length; from += pieceBytes) {
        buffer.toString('utf8', from, Math.min(buffer.length, from + pieceBytes))
      }
      const lap = m.lap()
      await tick()
      const gcMs = m.gcSince()
      m.stop()
      return { ...lap, gcMs, records: 0 }
    }
    const all = [...lines(buffer, 32 * 1024)].filter(Boolean)
    const decode = op === 'parse' ? JSON.parse : decodeHistoryEvent
    // Two passes, as the codec bench warms up.
    if (warm) for (let round = 0; round < 2; round++) for (const line of all) decode(line)
    global.gc?.()
    await tick()
    const kept = []
    const m = meter()
    if (keep) for (const line of all) kept.push(decode(line))
    else for (const line of all) decode(line)
    const lap = m.lap()
    await tick()
    const gcMs = m.gcSince()
    m.stop()
    return { ...lap, gcMs, records: all.length }
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
  const asked = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
  const wanted = (section) => asked.length === 0 || asked.includes(section)
  if (wanted('append')) appendTable()
  if (wanted('append-cpu')) appendCpuTable()
  if (wanted('load')) loadTable()
  if (wanted('steps')) stepsTable()
  if (wanted('export')) exportTable()
}

function appendTable() {
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
}

function appendCpuTable() {
  const cpuRows = [['store', 'CPU per append (ms)', 'above the memory store (ms)']]
  const memory = measure('appendCpu', { n: 2000, kind: 'memory' }).perAppendMs
  const file = measure('appendCpu', { n: 2000, kind: 'file' }).perAppendMs
  cpuRows.push(
    ['memory store', memory.toFixed(3), ''],
    ['file store (fsync off)', file.toFixed(3), (file - memory).toFixed(3)],
  )
  printTable(
    'CPU per append, one record at a time with work between appends (2,000 appends, median of 3 rounds)',
    cpuRows,
  )
}

function loadTable() {
  const rounds = roundsOption()
  const replayRows = [
    [
      'records',
      'records are',
      'file',
      'read records/s',
      'replay records/s',
      'load + replay records/s',
      'floor: read + JSON.parse, kept, records/s',
      'load + replay vs floor',
      'streamed: replaySession (readBatches), records/s',
      'streamed vs floor',
      'forwarded: replaySessionBatches, events counted, none kept, records/s',
      'forwarded vs floor',
      'GC pauses: load + replay / streamed / forwarded',
      'retained heap: load + replay / streamed / forwarded',
      'peak RSS: load + replay / streamed / forwarded',
    ],
  ]
  for (const [n, fixture] of [
    [25_000, 'uniform'],
    [50_000, 'uniform'],
    [100_000, 'uniform'],
    [100_000, 'uniform-ascii'],
    [100_000, 'mixed'],
  ]) {
    const dir = mkdtempSync(join(tmpdir(), 'kode-bench-'))
    measure('prepare', { n, dir, fixture })
    // Interleaved: each round runs the three in a rotated order, and a ratio compares runs of
    // the same round, so the machine's drift moves both sides alike.
    const runs = []
    for (let round = 0; round < rounds; round++) {
      const order = ['replay', 'floor', 'streamed', 'forwarded']
      for (let i = 0; i < round % order.length; i++) order.push(order.shift())
      const got = {}
      for (const name of order) got[name] = measure(name, { dir })
      runs.push(got)
    }
    rmSync(dir, { recursive: true, force: true })
    for (const r of runs) {
      for (const name of ['streamed', 'forwarded']) {
        if (r[name].events !== r.replay.events)
          throw new Error(
            `${name} replay gave ${r[name].events} events, deriveReplayEvents ${r.replay.events}`,
          )
      }
    }
    const loadCpu = (r) => r.replay.read.cpu + r.replay.replay.cpu
    const reads = ['replay', 'streamed', 'forwarded']
    const perSecond = (cpuMs) => fmt(n / (cpuMs / 1000))
    replayRows.push([
      fmt(n),
      fixtureLabel[fixture],
      mb(runs[0].replay.bytes),
      perSecond(median(runs.map((r) => r.replay.read.cpu))),
      perSecond(median(runs.map((r) => r.replay.replay.cpu))),
      perSecond(median(runs.map(loadCpu))),
      perSecond(median(runs.map((r) => r.floor.cpu))),
      `${median(runs.map((r) => r.floor.cpu / loadCpu(r))).toFixed(2)}x`,
      perSecond(median(runs.map((r) => r.streamed.cpu))),
      `${median(runs.map((r) => r.floor.cpu / r.streamed.cpu)).toFixed(2)}x`,
      perSecond(median(runs.map((r) => r.forwarded.cpu))),
      `${median(runs.map((r) => r.floor.cpu / r.forwarded.cpu)).toFixed(2)}x`,
      `${reads.map((name) => Math.round(median(runs.map((r) => r[name].gcMs)))).join(' / ')} ms`,
      reads.map((name) => mb(runs[0][name].retainedHeap)).join(' / '),
      reads.map((name) => mb(median(runs.map((r) => r[name].peakRss)))).join(' / '),
    ])
  }
  printTable(
    `load (store.read) + replay (deriveReplayEvents), streamed (replaySession) and forwarded (replaySessionBatches, events not kept), of a file-store session: CPU time (user + system, all threads), median of ${rounds} interleaved rounds of fresh processes`,
    replayRows,
  )
}

/** Where the load time goes: the steps of a load, each alone, on the 100k-record uniform file. */
function stepsTable() {
  const analysisDir = mkdtempSync(join(tmpdir(), 'kode-bench-'))
  measure('prepare', { n: 100_000, dir: analysisDir, fixture: 'uniform' })
  const stepRows = [
    [
      'step (100,000 records, 120 MB, non-ASCII in most)',
      'records/s',
      'wall ms',
      'CPU ms (all threads)',
      'page faults',
      'GC pauses',
    ],
  ]
  for (const [label, params] of [
    [
      'decodeHistoryEvent, results dropped, after warm-up (as the codec bench)',
      { op: 'decode', keep: false, warm: true },
    ],
    [
      'decodeHistoryEvent, results dropped, first pass (cold JIT)',
      { op: 'decode', keep: false, warm: false },
    ],
    ['decodeHistoryEvent, results kept, first pass', { op: 'decode', keep: true, warm: false }],
    ['JSON.parse, results kept, first pass', { op: 'parse', keep: true, warm: false }],
    ['UTF-8 decoding of the file in 1 MiB pieces (the store before)', { op: 'utf8', pieceKiB: 1024 }],
    ['UTF-8 decoding of the file in 32 KiB pieces (the store now)', { op: 'utf8', pieceKiB: 32 }],
  ]) {
    const runs = Array.from({ length: RUNS }, () => measure('step', { dir: analysisDir, ...params }))
    const best = fastest(runs, (r) => r.wall)
    stepRows.push([
      label,
      params.op === 'utf8' ? '' : fmt(100_000 / (best.wall / 1000)),
      fmt(best.wall),
      fmt(best.cpu),
      fmt(best.faults),
      `${Math.round(best.gcMs)} ms`,
    ])
  }
  rmSync(analysisDir, { recursive: true, force: true })
  printTable(`where the load time goes, fastest of ${RUNS} fresh processes`, stepRows)
}

function exportTable() {
  const exportRows = [['messages', 'seconds', 'messages/s', 'HTML', 'peak RSS']]
  const r = measure('export', { n: 10_000 })
  exportRows.push([fmt(10_000), r.seconds.toFixed(2), fmt(10_000 / r.seconds), mb(r.bytes), mb(r.peakRss)])
  printTable('exportHtml', exportRows)
}

/** `--rounds=N`: interleaved rounds of the load table (default 5). */
function roundsOption() {
  const arg = process.argv.find((a) => a.startsWith('--rounds='))
  const rounds = arg === undefined ? 5 : Number(arg.slice('--rounds='.length))
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds takes a positive integer, got ${arg}`)
  return rounds
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
