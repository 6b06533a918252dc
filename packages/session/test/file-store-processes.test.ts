import { type ChildProcess, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { HistoryEvent } from '@kode/protocol'
import type { SessionStore, StoreWarning } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { bundleForNode } from '../../../test/children/bundle-for-node.js'
import { startChild } from '../../../test/children/child-process.js'

// Real processes against one store directory: a writer killed with SIGKILL while a write is in
// flight, and two writers competing for one session.

let child: string
let dir: string
const running: ChildProcess[] = []

beforeAll(async () => {
  child = await bundleForNode(resolve(import.meta.dirname, 'processes/store-child.ts'))
}, 60_000)
afterAll(() => rmSync(resolve(child, '..'), { recursive: true, force: true }))
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kode-processes-'))
  const store = createFileSessionStore({ dir })
  await store.create({ id: 's' })
  await store.close()
})
afterEach(() => {
  for (const process of running.splice(0)) process.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

const start = (...args: string[]) => startChild(child, running, ...args)
const record = (id: string): HistoryEvent => ({ role: 'user', id, createdAt: 1, parts: [] })

function reader(warnings: StoreWarning[]): SessionStore {
  return createFileSessionStore({ dir, onWarning: (w) => warnings.push(w) })
}

describe('a writer killed with SIGKILL mid-append', () => {
  test('leaves a torn line that is reported, ignored and repaired; nothing acknowledged is lost', async () => {
    // The kill races the kernel finishing the write: on a loaded machine this process can be off
    // the CPU for the whole write, or between seeing it start and killing. Such a run tears
    // nothing and proves nothing here, so it is repeated on a fresh session until a kill lands
    // mid-write.
    let torn: Tear | undefined
    for (let attempt = 0; torn === undefined; attempt++) {
      if (attempt === 10) throw new Error('no kill landed while the big write was in flight')
      const sessionId = `s-${attempt}`
      const setup = createFileSessionStore({ dir })
      await setup.create({ id: sessionId })
      await setup.close()
      torn = await tear(sessionId)
    }
    const { sessionId, history, before, after } = torn

    const warnings: StoreWarning[] = []
    const store = reader(warnings)
    const ids = (await store.read(sessionId)).map((e) => e.id)
    expect(ids).toEqual(['rec-0', 'rec-1', 'rec-2', 'rec-3', 'rec-4'])
    expect(warnings).toEqual([
      { type: 'torn_tail', sessionId, file: history, line: 6, bytes: after - before },
    ])

    warnings.length = 0
    await store.append(sessionId, [{ role: 'user', id: 'after', createdAt: 1, parts: [] }])
    expect(warnings.map((w) => w.type).sort()).toEqual(['stale_lock_removed', 'torn_tail_repaired'])
    expect(warnings.find((w) => w.type === 'torn_tail_repaired')).toMatchObject({ bytes: after - before })
    warnings.length = 0
    expect((await store.read(sessionId)).map((e) => e.id)).toEqual([...ids, 'after'])
    expect(warnings).toEqual([])
    expect(await store.info(sessionId)).toMatchObject({ recordCount: ids.length + 1 })
    await store.close()
    expect(readFileSync(history, 'utf8').endsWith('\n')).toBe(true)
  }, 120_000)
})

/** A big append cut short by SIGKILL: the history file's size before it and after the kill. */
interface Tear {
  sessionId: string
  history: string
  before: number
  after: number
}

/**
 * Starts a writer that acknowledges five records and then appends one ~32 MB line, and kills it
 * with SIGKILL once the file is seen growing. One line takes the kernel many page copies to write,
 * and Linux stops a write between two of them when SIGKILL is pending, so the line tears. Returns
 * undefined when the kill missed the write (it finished before it was seen, or before the kill
 * landed).
 */
async function tear(sessionId: string): Promise<Tear | undefined> {
  const bigBytes = 32 * 1024 * 1024
  const history = join(dir, sessionId, 'history.jsonl')
  const writer = start('tear', dir, sessionId, String(bigBytes))
  await writer.line((line) => line === 'big')
  const acked = writer.lines.filter((l) => l.startsWith('ack ')).length
  const before = statSync(history).size
  const grown = waitForGrowth(history, before, before + bigBytes)
  writer.process.kill('SIGKILL')
  await writer.exited
  expect(acked).toBe(5)
  const after = statSync(history).size
  if (grown === undefined || after - before >= bigBytes) return undefined
  expect(writer.lines).not.toContain('ack 5')
  expect(after).toBeGreaterThanOrEqual(grown)
  return { sessionId, history, before, after }
}

/**
 * Waits, polling synchronously so no moment is missed, until `file` is larger than `size` (a write
 * has started) and returns the size seen, or undefined if the file reached `complete` first (the
 * write finished before it was seen). Fails if nothing is written within the limit.
 */
function waitForGrowth(file: string, size: number, complete: number): number | undefined {
  const deadline = Date.now() + 60_000
  for (;;) {
    const now = statSync(file).size
    if (now >= complete) return undefined
    if (now > size) return now
    if (Date.now() > deadline) throw new Error('the big write never started')
  }
}

describe('two processes writing one session', () => {
  test('the second is refused while the first holds the session, and succeeds after it closes', async () => {
    const holder = start('hold', dir, 's')
    await holder.line((line) => line === 'ready')

    const refused = start('try', dir, 's')
    expect(await refused.line(() => true)).toBe(`session_locked ${holder.process.pid}`)

    holder.process.stdin!.write('close\n')
    await holder.line((line) => line === 'closed')
    expect(await holder.exited).toBe(0)

    const second = start('try', dir, 's')
    expect(await second.line(() => true)).toBe('ok')
    await second.exited

    const store = reader([])
    expect((await store.read('s')).map((e) => e.id)).toEqual([
      `held-${holder.process.pid}`,
      `try-${second.process.pid}`,
    ])
    await store.close()
  })

  test('a lease held here refuses another process, and releasing it lets that process in', async () => {
    const store = reader([])
    const lease = await store.acquire('s')
    const refused = start('try', dir, 's')
    expect(await refused.line(() => true)).toBe(`session_locked ${process.pid}`)
    await lease.release()
    const next = start('try', dir, 's')
    expect(await next.line(() => true)).toBe('ok')
    await store.close()
  })

  test('a writer whose lock another process moved away stops writing; the process that took the session keeps it', async () => {
    // What a lost race leaves: a process that judged this writer's lock stale moved it aside and
    // could not put it back before a third took the session (here, the `hold` child).
    const store = reader([])
    const lease = await store.acquire('s')
    await lease.append([record('mine-1')])
    const lock = join(dir, 's', 'writer.lock')
    renameSync(lock, `${lock}.moved`)
    const other = start('hold', dir, 's')
    await other.line((line) => line === 'ready')
    const theirs = readFileSync(lock, 'utf8')
    // This store's reads see the other process's record, which its own writer's length would cut
    // off; they leave that writer to find out at its next append.
    expect((await store.read('s')).map((e) => e.id)).toEqual(['mine-1', `held-${other.process.pid}`])
    expect((await store.info('s'))?.recordCount).toBe(2)

    await expect(lease.append([record('mine-2')])).rejects.toMatchObject({ code: 'session_lease_lost' })
    await expect(lease.append([record('mine-3')])).rejects.toMatchObject({ code: 'session_lease_lost' })
    await lease.release()
    await store.close()
    // Neither its lock nor its metadata was touched: the other process still holds the session.
    expect(readFileSync(lock, 'utf8')).toBe(theirs)
    const ids = readFileSync(join(dir, 's', 'history.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { id: string }).id)
    expect(ids).toEqual(['mine-1', `held-${other.process.pid}`])

    other.send('close')
    await other.line((line) => line === 'closed')
    const after = createFileSessionStore({ dir })
    expect((await after.read('s')).map((r) => r.id)).toEqual(ids)
    expect((await after.info('s'))?.recordCount).toBe(2)
    await after.close()
  })

  test('a session whose writer was killed is taken over by the next process', async () => {
    const holder = start('hold', dir, 's')
    await holder.line((line) => line === 'ready')
    holder.process.kill('SIGKILL')
    await holder.exited

    const next = start('try', dir, 's')
    expect(await next.line(() => true)).toBe('ok')
  })
})

/** Mounts a small tmpfs (root only): a real disk that fills up. Undefined where it cannot. */
function mountSmallDisk(bytes: number): { path: string; unmount: () => void } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const path = mkdtempSync(join(tmpdir(), 'kode-full-disk-'))
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', path])
  if (mounted.status !== 0) {
    rmSync(path, { recursive: true, force: true })
    return undefined
  }
  return {
    path,
    unmount: () => {
      spawnSync('umount', [path])
      rmSync(path, { recursive: true, force: true })
    },
  }
}

describe('a store with more sessions than the process may open files', () => {
  // macOS allows a process 256 open files by default: a store of a few hundred sessions is common.
  test('list() returns every session; none is skipped as unreadable for want of a file descriptor', async () => {
    const count = 600
    const store = createFileSessionStore({ dir, fsync: false })
    for (let i = 0; i < count; i++) {
      await store.create({ id: `many-${i}` })
      await store.append(`many-${i}`, [{ role: 'user', id: 'u', createdAt: 1, parts: [] }])
    }
    await store.close()
    const listing = spawnSync(
      'sh',
      ['-c', `ulimit -n 200 && exec "$0" "$@"`, process.execPath, child, 'list', dir, '-'],
      {
        encoding: 'utf8',
      },
    )
    expect(listing.stderr).toBe('')
    expect(listing.stdout.trim()).toBe(`listed ${count + 1} warned 0`)
  }, 60_000)

  test('a session that ran more sub-agents than that replays with every one of them', async () => {
    const count = 600
    const store = createFileSessionStore({ dir, fsync: false })
    const parent: HistoryEvent[] = [{ role: 'user', id: 'u', createdAt: 1, parts: [] }]
    for (let i = 0; i < count; i++) {
      await store.create({ id: `child-${i}`, parentSessionId: 's', subAgent: { name: 'helper' } })
      await store.append(`child-${i}`, [{ role: 'user', id: 'cu', createdAt: 1, parts: [] }])
      parent.push(
        {
          role: 'assistant',
          id: `a${i}`,
          createdAt: 1,
          parts: [{ type: 'tool_call', id: `c${i}`, name: 'helper', argumentsJson: '{}' }],
        },
        {
          role: 'tool',
          id: `t${i}`,
          createdAt: 1,
          toolCallId: `c${i}`,
          toolName: 'helper',
          status: 'success',
          outputText: 'done',
          parts: [],
          uiExtra: { type: 'session', sessionId: `child-${i}` },
        },
      )
    }
    await store.append('s', parent)
    await store.close()
    const replay = spawnSync(
      'sh',
      ['-c', `ulimit -n 200 && exec "$0" "$@"`, process.execPath, child, 'replay', dir, 's'],
      {
        encoding: 'utf8',
      },
    )
    expect(replay.stderr).toBe('')
    expect(replay.stdout.trim()).toBe(`replayed ${count + 1}`)
  }, 60_000)
})

const smallDisk = mountSmallDisk(256 * 1024)
afterAll(() => smallDisk?.unmount())

describe('a disk that fills up under a writer process', () => {
  // Needs root to mount a tmpfs (CI runs as root); the in-process failure tests in
  // file-store-hostile.test.ts cover the same path everywhere.
  test.runIf(smallDisk !== undefined)(
    'a new process reads exactly the acknowledged records, and no temp file is left (real ENOSPC on a tmpfs)',
    async () => {
      const disk = smallDisk!.path
      const setup = createFileSessionStore({ dir: disk })
      await setup.create({ id: 'full' })
      await setup.close()
      const writer = start('fill', disk, 'full', String(7000))
      await writer.line((line) => line === 'closed' || line.startsWith('close_failed'))
      expect(await writer.exited).toBe(0)
      const acked = writer.lines.filter((l) => l.startsWith('acked ')).length * 3
      expect(acked).toBeGreaterThan(0)
      expect(writer.lines).toContain('failed ENOSPC')

      expect(readdirSync(join(disk, 'full')).sort()).toEqual(['history.jsonl', 'session.json'])
      const history = readFileSync(join(disk, 'full', 'history.jsonl'), 'utf8')
      expect(history.endsWith('\n')).toBe(true)
      const warnings: StoreWarning[] = []
      const store = createFileSessionStore({ dir: disk, onWarning: (w) => warnings.push(w) })
      const ids = (await store.read('full')).map((e) => e.id)
      expect(ids).toHaveLength(acked)
      expect(ids.at(-1)).toBe(`fill-${acked / 3 - 1}-2`)
      expect(await store.info('full')).toMatchObject({ recordCount: acked })
      expect(warnings).toEqual([])
      await store.close()
    },
    60_000,
  )
})
