import { execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { link, open, rename, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import type { HistoryEvent } from '@kode/protocol'
import { SessionError, type SessionErrorCode, type SessionStore, type StoreWarning } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { ourStart } from './helpers/process-start.js'

// `writeFile`, `link`, `open` and `rename` pass through unless a test makes one call fail (a full
// disk, a file system without hard links, a platform that cannot open a directory) or watches them.
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...actual,
    writeFile: vi.fn(actual.writeFile),
    link: vi.fn(actual.link),
    open: vi.fn(actual.open),
    rename: vi.fn(actual.rename),
  }
})

// The file store's directory is shared with whatever else runs as the user: links planted in it,
// and disks that fill up mid-write.

let dir: string
let outside: string
let warnings: StoreWarning[]
const stores: SessionStore[] = []

function openStore(): SessionStore {
  const store = createFileSessionStore({ dir, fsync: false, onWarning: (w) => warnings.push(w) })
  stores.push(store)
  return store
}
const record = (id: string, text = 'x'): HistoryEvent => ({
  role: 'user',
  id,
  createdAt: 1,
  parts: [{ type: 'text', text }],
})

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kode-hostile-store-'))
  outside = mkdtempSync(join(tmpdir(), 'kode-outside-'))
  warnings = []
  const store = createFileSessionStore({ dir, fsync: false })
  await store.create({ id: 's' })
  await store.append('s', [record('r1'), record('r2')])
  await store.close()
})
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.allSettled(stores.splice(0).map((s) => s.close()))
  rmSync(dir, { recursive: true, force: true })
  rmSync(outside, { recursive: true, force: true })
})

async function codeOf(promise: Promise<unknown>): Promise<SessionErrorCode | string> {
  try {
    await promise
  } catch (error) {
    return SessionError.is(error) ? error.code : String((error as NodeJS.ErrnoException).code ?? error)
  }
  return 'resolved'
}

describe('a session file with other names (a hard link) is never written', () => {
  test('an append is refused, the other name keeps its bytes, and reading still works', async () => {
    // A backup made with `cp -al`, or a file outside the store linked in.
    const other = join(outside, 'backup-history.jsonl')
    await link(join(dir, 's', 'history.jsonl'), other)
    const before = readFileSync(other, 'utf8')
    const store = openStore()
    expect(await codeOf(store.append('s', [record('r3')]))).toBe('hard_link_refused')
    expect(readFileSync(other, 'utf8')).toBe(before)
    expect((await store.read('s')).map((r) => r.id)).toEqual(['r1', 'r2'])
    expect(existsSync(join(dir, 's', 'writer.lock'))).toBe(false)
    // Deleting the session removes its name only: the other keeps the bytes.
    await store.delete('s')
    expect(await store.info('s')).toBeUndefined()
    expect(readFileSync(other, 'utf8')).toBe(before)
  })

  test('a torn tail is not cut off through a hard link', async () => {
    const history = join(dir, 's', 'history.jsonl')
    writeFileSync(history, `${readFileSync(history, 'utf8')}{"role":"user","id":"r3`)
    const other = join(outside, 'victim.jsonl')
    await link(history, other)
    const before = readFileSync(other, 'utf8')
    const store = openStore()
    expect(await codeOf(store.append('s', [record('r4')]))).toBe('hard_link_refused')
    expect(readFileSync(other, 'utf8')).toBe(before)
  })
})

describe('symbolic links inside the store are refused, never written through', () => {
  test('a symlinked history.jsonl: append and read are refused and the target is untouched', async () => {
    const target = join(outside, 'precious.txt')
    writeFileSync(target, 'precious\n')
    rmSync(join(dir, 's', 'history.jsonl'))
    symlinkSync(target, join(dir, 's', 'history.jsonl'))
    const store = openStore()
    expect(await codeOf(store.append('s', [record('r3')]))).toBe('symlink_refused')
    expect(await codeOf(store.read('s'))).toBe('symlink_refused')
    expect(await codeOf(store.info('s'))).toBe('symlink_refused')
    expect(readFileSync(target, 'utf8')).toBe('precious\n')
    // The refusal left no lock behind: the writer gave the session up.
    expect(existsSync(join(dir, 's', 'writer.lock'))).toBe(false)
  })

  test('a symlinked session directory: nothing is read, locked or written there', async () => {
    // The real session moves outside; a link takes its place.
    renameSync(join(dir, 's'), join(outside, 's'))
    symlinkSync(join(outside, 's'), join(dir, 's'), 'dir')
    const before = readdirSync(join(outside, 's')).sort()
    const history = readFileSync(join(outside, 's', 'history.jsonl'), 'utf8')
    const store = openStore()
    expect(await codeOf(store.append('s', [record('r3')]))).toBe('symlink_refused')
    expect(await codeOf(store.read('s'))).toBe('symlink_refused')
    expect(await codeOf(store.update('s', { title: 't' }))).toBe('symlink_refused')
    expect(await codeOf(store.delete('s'))).toBe('symlink_refused')
    expect(await store.list()).toEqual([])
    // Left out of the list, but named: a session is not silently missing.
    expect(warnings).toMatchObject([
      { type: 'unreadable_session', sessionId: 's', error: { code: 'symlink_refused' } },
    ])
    expect(readdirSync(join(outside, 's')).sort()).toEqual(before)
    expect(readFileSync(join(outside, 's', 'history.jsonl'), 'utf8')).toBe(history)
  })

  test('a session directory that is a link to a directory that does not exist yet is not created through', async () => {
    symlinkSync(join(outside, 'new'), join(dir, 'n'), 'dir')
    const store = openStore()
    expect(await codeOf(store.create({ id: 'n' }))).toBe('symlink_refused')
    expect(existsSync(join(outside, 'new'))).toBe(false)
  })

  test('a link planted as the writer lock is not read through: the session is refused as locked', async () => {
    const target = join(outside, 'lock.json')
    writeFileSync(target, JSON.stringify({ pid: 1, hostname: 'elsewhere', acquiredAt: 1, token: 't' }))
    symlinkSync(target, join(dir, 's', 'writer.lock'))
    const store = openStore()
    const error = await store.append('s', [record('r3')]).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'session_locked', owner: 'unknown' })
    expect(readFileSync(target, 'utf8')).toContain('elsewhere')
  })

  test('a symlinked session.json: reading its metadata is refused', async () => {
    const target = join(outside, 'meta.json')
    writeFileSync(target, readFileSync(join(dir, 's', 'session.json')))
    rmSync(join(dir, 's', 'session.json'))
    symlinkSync(target, join(dir, 's', 'session.json'))
    const store = openStore()
    expect(await codeOf(store.info('s'))).toBe('symlink_refused')
    expect(await store.list()).toEqual([])
    expect(warnings.map((w) => w.type)).toEqual(['unreadable_session'])
  })

  test('a link planted as session.json.tmp is removed, not written through', async () => {
    const target = join(outside, 'victim.txt')
    writeFileSync(target, 'victim\n')
    symlinkSync(target, join(dir, 's', 'session.json.tmp'))
    const store = openStore()
    await store.update('s', { title: 'renamed' })
    await store.close()
    expect(readFileSync(target, 'utf8')).toBe('victim\n')
    expect(readdirSync(join(dir, 's')).sort()).toEqual(['history.jsonl', 'session.json'])
    expect(JSON.parse(readFileSync(join(dir, 's', 'session.json'), 'utf8'))).toMatchObject({
      title: 'renamed',
    })
  })
})

// A FIFO opened for reading blocks until a writer opens it, for ever (and holds one of the few
// threads the platform does file I/O on): a store must not wait on one planted in its directory.
describe('a session file that is not a regular file is refused, never waited on', () => {
  const fifo = (path: string) => {
    rmSync(path, { force: true })
    execFileSync('mkfifo', [path])
  }

  test('a FIFO as history.jsonl: read, readBatches, info and append are refused at once', async () => {
    fifo(join(dir, 's', 'history.jsonl'))
    const store = openStore()
    expect(await codeOf(store.read('s'))).toBe('not_a_regular_file')
    expect(await codeOf(store.readBatches!('s')[Symbol.asyncIterator]().next())).toBe('not_a_regular_file')
    expect(await codeOf(store.info('s'))).toBe('not_a_regular_file')
    expect(await codeOf(store.append('s', [record('r3')]))).toBe('not_a_regular_file')
    expect(existsSync(join(dir, 's', 'writer.lock'))).toBe(false)
  })

  test('a FIFO as session.json: the session is refused, and list() skips it with a warning', async () => {
    fifo(join(dir, 's', 'session.json'))
    const store = openStore()
    expect(await codeOf(store.info('s'))).toBe('not_a_regular_file')
    expect(await codeOf(store.read('s'))).toBe('not_a_regular_file')
    expect(await store.list()).toEqual([])
    expect(warnings.map((w) => w.type)).toEqual(['unreadable_session'])
  })

  test('a FIFO as the writer lock: the session is refused as locked by an unreadable lock', async () => {
    execFileSync('mkfifo', [join(dir, 's', 'writer.lock')])
    const error = await openStore()
      .append('s', [record('r3')])
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'session_locked', owner: 'unknown' })
  })

  test('such a session can still be deleted, as one whose metadata is corrupt', async () => {
    const setup = openStore()
    await setup.create({ id: 't' })
    await setup.close()
    fifo(join(dir, 's', 'history.jsonl'))
    rmSync(join(dir, 't', 'session.json'))
    mkdirSync(join(dir, 't', 'session.json'))
    const store = openStore()
    await store.delete('s')
    await store.delete('t')
    expect(readdirSync(dir)).toEqual([])
  })

  test('a file in place of a session directory is no session, and its id is taken', async () => {
    writeFileSync(join(dir, 'f'), 'not a session')
    const store = openStore()
    expect(await store.info('f')).toBeUndefined()
    expect(await codeOf(store.read('f'))).toBe('session_not_found')
    expect(await codeOf(store.append('f', [record('r1')]))).toBe('session_not_found')
    expect(await codeOf(store.update('f', { title: 't' }))).toBe('session_not_found')
    expect(await codeOf(store.create({ id: 'f' }))).toBe('session_exists')
    await store.delete('f')
    expect(readFileSync(join(dir, 'f'), 'utf8')).toBe('not a session')
    expect((await store.list()).map((info) => info.id)).toEqual(['s'])
  })

  test('a directory as session.json.tmp: opening a writer or writing metadata is refused, naming it', async () => {
    const temp = join(dir, 's', 'session.json.tmp')
    mkdirSync(temp)
    writeFileSync(join(temp, 'notes.txt'), "someone else's file\n")
    const history = readFileSync(join(dir, 's', 'history.jsonl'), 'utf8')
    const store = openStore()
    const error = await store.append('s', [record('r3')]).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'not_a_regular_file', sessionId: 's' })
    expect((error as Error).message).toContain(temp)
    expect(await codeOf(store.update('s', { title: 't' }))).toBe('not_a_regular_file')
    // Nothing was lost: the directory and what it holds, the history, the metadata; no lock left.
    expect(readFileSync(join(temp, 'notes.txt'), 'utf8')).toBe("someone else's file\n")
    expect(readFileSync(join(dir, 's', 'history.jsonl'), 'utf8')).toBe(history)
    expect(await store.info('s')).toMatchObject({ recordCount: 2 })
    expect(existsSync(join(dir, 's', 'writer.lock'))).toBe(false)
    // Once it is moved away, the session is written again.
    renameSync(temp, join(outside, 'moved'))
    await store.append('s', [record('r3')])
    expect(await store.read('s')).toHaveLength(3)
  })

  test('a directory made as session.json.tmp while a writer is open: its metadata write is refused, typed', async () => {
    const store = openStore()
    await store.append('s', [record('r3')])
    const temp = join(dir, 's', 'session.json.tmp')
    mkdirSync(temp)
    const error = await store.update('s', { title: 't' }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'not_a_regular_file' })
    expect((error as Error).message).toContain(temp)
    expect(existsSync(temp)).toBe(true)
    rmSync(temp, { recursive: true })
    expect(await store.update('s', { title: 't' })).toMatchObject({ title: 't', recordCount: 3 })
  })

  test('a directory made as session.json while a writer is open: its metadata write is refused, typed', async () => {
    const store = openStore()
    await store.append('s', [record('r3')])
    const meta = join(dir, 's', 'session.json')
    rmSync(meta)
    mkdirSync(meta)
    const error = await store.update('s', { title: 't' }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'not_a_regular_file' })
    expect((error as Error).message).toContain(meta)
    // The temp file written for it is gone, and the history is whole.
    expect(readdirSync(join(dir, 's')).sort()).toEqual(['history.jsonl', 'session.json', 'writer.lock'])
    expect(await store.read('s')).toHaveLength(3)
  })

  test('a socket as the writer lock: the session is refused as locked by an unreadable lock', async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(join(dir, 's', 'writer.lock'), resolve))
    try {
      const error = await openStore()
        .append('s', [record('r3')])
        .catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'session_locked', owner: 'unknown' })
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  test('a directory as history.jsonl or session.json is refused the same way', async () => {
    rmSync(join(dir, 's', 'history.jsonl'))
    mkdirSync(join(dir, 's', 'history.jsonl'))
    const store = openStore()
    expect(await codeOf(store.read('s'))).toBe('not_a_regular_file')
    expect(await codeOf(store.info('s'))).toBe('not_a_regular_file')
    expect(await codeOf(store.append('s', [record('r3')]))).toBe('not_a_regular_file')
    rmSync(join(dir, 's', 'session.json'))
    mkdirSync(join(dir, 's', 'session.json'))
    expect(await codeOf(store.info('s'))).toBe('not_a_regular_file')
  })
})

/**
 * Makes the next history write stop half-way and fail with ENOSPC (default), as a full disk does:
 * the kernel writes what fits, and the next write fails.
 */
async function failNextWriteHalfWay(code: 'ENOSPC' | 'EIO' = 'ENOSPC'): Promise<void> {
  const probe = await open(join(outside, 'probe'), 'w')
  const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> }
  await probe.close()
  const original = proto.write
  let calls = 0
  vi.spyOn(proto, 'write').mockImplementation(async function (this: unknown, ...args: unknown[]) {
    const [buffer, offset] = args as [Buffer, number]
    calls++
    if (calls === 1) return original.call(this, buffer, offset, Math.floor((buffer.length - offset) / 2) + 1)
    throw Object.assign(new Error(`${code}: the write failed`), { code })
  })
}

describe('a full disk mid-append', () => {
  test('leaves the file exactly as before the append, for this store and for a new one', async () => {
    const store = openStore()
    await store.append('s', [record('r3')])
    const history = join(dir, 's', 'history.jsonl')
    const before = readFileSync(history)
    await failNextWriteHalfWay()
    // Three lines, cut in the middle of the second: the first one is whole on disk for a moment.
    const batch = [
      record('f1', 'a'.repeat(100)),
      record('f2', 'b'.repeat(100)),
      record('f3', 'c'.repeat(100)),
    ]
    expect(await codeOf(store.append('s', batch))).toBe('ENOSPC')
    vi.restoreAllMocks()
    expect(readFileSync(history)).toEqual(before)

    const reader = openStore()
    expect((await reader.read('s')).map((e) => e.id)).toEqual(['r1', 'r2', 'r3'])
    expect(await reader.info('s')).toMatchObject({ recordCount: 3 })

    // The writer carries on where the last acknowledged record ended.
    await store.append('s', [record('r4')])
    await store.close()
    expect((await reader.read('s')).map((e) => e.id)).toEqual(['r1', 'r2', 'r3', 'r4'])
    expect(await reader.info('s')).toMatchObject({ recordCount: 4 })
    expect(readdirSync(join(dir, 's')).sort()).toEqual(['history.jsonl', 'session.json'])
  })

  test("this store's reads never see a batch being written, so never the records of one that fails", async () => {
    const store = openStore()
    const probe = await open(join(outside, 'probe'), 'w')
    const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> }
    await probe.close()
    const original = proto.write
    let halfWritten!: () => void
    const onDisk = new Promise<void>((resolve) => {
      halfWritten = resolve
    })
    let resume!: () => void
    const resumed = new Promise<void>((resolve) => {
      resume = resolve
    })
    let calls = 0
    // The kernel writes the first half of the batch (its first line whole), then the disk is full.
    vi.spyOn(proto, 'write').mockImplementation(async function (this: unknown, ...args: unknown[]) {
      const [buffer, offset] = args as [Buffer, number]
      if (++calls > 1) throw Object.assign(new Error('ENOSPC: the write failed'), { code: 'ENOSPC' })
      const written = await original.call(this, buffer, offset, Math.floor((buffer.length - offset) / 2) + 1)
      halfWritten()
      await resumed
      return written
    })
    const batch = [record('f1', 'a'.repeat(100)), record('f2', 'b'.repeat(100))]
    const appending = codeOf(store.append('s', batch))
    await onDisk
    expect((await store.read('s')).map((e) => e.id)).toEqual(['r1', 'r2'])
    const batches: string[] = []
    for await (const b of store.readBatches!('s', { batchSize: 1 })) batches.push(...b.map((e) => e.id))
    expect(batches).toEqual(['r1', 'r2'])
    expect(warnings).toEqual([])
    resume()
    expect(await appending).toBe('ENOSPC')
    expect((await store.read('s')).map((e) => e.id)).toEqual(['r1', 'r2'])
  })

  test('a metadata write that fails leaves no session.json.tmp behind', async () => {
    const store = openStore()
    const probe = await open(join(outside, 'probe'), 'w')
    const proto = Object.getPrototypeOf(probe) as { writeFile: (...args: unknown[]) => Promise<unknown> }
    await probe.close()
    const original = proto.writeFile
    vi.spyOn(proto, 'writeFile').mockImplementation(async function (this: unknown, ...args: unknown[]) {
      await original.call(this, String(args[0]).slice(0, 10))
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
    })
    expect(await codeOf(store.update('s', { title: 'full' }))).toBe('ENOSPC')
    expect(await codeOf(store.close())).toBe('ENOSPC')
    vi.restoreAllMocks()
    expect(readdirSync(join(dir, 's')).sort()).toEqual(['history.jsonl', 'session.json'])
    const reader = openStore()
    expect((await reader.read('s')).map((e) => e.id)).toEqual(['r1', 'r2'])
  })

  test('an update whose metadata cannot be written changes nothing, then or later', async () => {
    const store = openStore()
    await store.update('s', { title: 'before' })
    const probe = await open(join(outside, 'probe'), 'w')
    const proto = Object.getPrototypeOf(probe) as { writeFile: (...args: unknown[]) => Promise<unknown> }
    await probe.close()
    vi.spyOn(proto, 'writeFile').mockRejectedValueOnce(
      Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }),
    )
    expect(await codeOf(store.update('s', { title: 'lost' }))).toBe('ENOSPC')
    vi.restoreAllMocks()
    expect(await store.info('s')).toMatchObject({ title: 'before' })
    // The disk has room again: the next writes must not bring the rejected patch back.
    await store.append('s', [record('r3')])
    await store.close()
    expect(await openStore().info('s')).toMatchObject({ title: 'before', recordCount: 3 })
  })

  test('a create that fails leaves no session directory behind, and the id can be created later', async () => {
    const store = openStore()
    const probe = await open(join(outside, 'probe'), 'w')
    const proto = Object.getPrototypeOf(probe) as { writeFile: (...args: unknown[]) => Promise<unknown> }
    await probe.close()
    // The metadata cannot be written...
    const spy = vi.spyOn(proto, 'writeFile').mockImplementation(async () => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
    })
    expect(await codeOf(store.create({ id: 'n' }))).toBe('ENOSPC')
    spy.mockRestore()
    // ...or the writer lock cannot.
    vi.mocked(writeFile).mockImplementationOnce(async () => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
    })
    expect(await codeOf(store.create({ id: 'm' }))).toBe('ENOSPC')
    expect(readdirSync(dir)).toEqual(['s'])
    await store.create({ id: 'n' })
    await store.create({ id: 'm' })
    expect((await store.list()).map((info) => info.id).sort()).toEqual(['m', 'n', 's'])
  })

  test('a writer lock that cannot be written leaves no temp file in the session directory', async () => {
    const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')
    // The disk fills up while the lock's temp file is written: it is created, its content is not.
    vi.mocked(writeFile).mockImplementationOnce(async (file, _data, options) => {
      await actual.writeFile(file, '', options)
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
    })
    const store = openStore()
    expect(await codeOf(store.append('s', [record('r3')]))).toBe('ENOSPC')
    expect(readdirSync(join(dir, 's')).sort()).toEqual(['history.jsonl', 'session.json'])
    // The session is writable once there is room again.
    await store.append('s', [record('r3')])
    expect((await store.read('s')).map((e) => e.id)).toEqual(['r1', 'r2', 'r3'])
  })

  test('without hard links, a writer lock left empty by a full disk is removed, not kept locking', async () => {
    const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')
    const noLinks = () => {
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' })
    }
    vi.mocked(link).mockImplementation(noLinks)
    const probe = await open(join(outside, 'probe'), 'w')
    const proto = Object.getPrototypeOf(probe) as { writeFile: (...args: unknown[]) => Promise<unknown> }
    await probe.close()
    // The lock file is created, then the disk is full when its content is written.
    vi.spyOn(proto, 'writeFile').mockRejectedValueOnce(
      Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }),
    )
    try {
      const store = openStore()
      expect(await codeOf(store.append('s', [record('r3')]))).toBe('ENOSPC')
      expect(readdirSync(join(dir, 's')).sort()).toEqual(['history.jsonl', 'session.json'])
      // There is room again: the session is not locked out.
      await store.append('s', [record('r3')])
      await store.close()
    } finally {
      vi.mocked(link).mockImplementation(actual.link)
    }
    expect((await openStore().read('s')).map((e) => e.id)).toEqual(['r1', 'r2', 'r3'])
  })

  // Linux shows a process's open files in /proc.
  test.runIf(existsSync('/proc/self/fd'))(
    'a create whose metadata cannot be written leaves no file open',
    async () => {
      const openFiles = () =>
        readdirSync('/proc/self/fd')
          .map((fd) => {
            try {
              return readlinkSync(`/proc/self/fd/${fd}`)
            } catch {
              return ''
            }
          })
          .filter((path) => path.startsWith(join(dir, 'c')))
      const store = openStore()
      const probe = await open(join(outside, 'probe'), 'w')
      const proto = Object.getPrototypeOf(probe) as { writeFile: (...args: unknown[]) => Promise<unknown> }
      await probe.close()
      vi.spyOn(proto, 'writeFile').mockRejectedValue(
        Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }),
      )
      expect(await codeOf(store.create({ id: 'c' }))).toBe('ENOSPC')
      vi.restoreAllMocks()
      expect(openFiles()).toEqual([])
      // Once there is room again, the half-made session is created in full.
      await store.create({ id: 'c' })
      await store.close()
      expect(openFiles()).toEqual([])
    },
  )
})

describe('a power loss', () => {
  // A renamed file whose content was never synced can come back empty after a power loss (delayed
  // allocation), and an empty session.json makes the whole session unreadable.
  test.runIf(existsSync('/proc/self/fd'))(
    'with fsync on, session.json content is on disk before it takes its name',
    async () => {
      const probe = await open(join(outside, 'probe'), 'w')
      const proto = Object.getPrototypeOf(probe) as Record<'sync' | 'datasync', () => Promise<void>>
      await probe.close()
      const synced: string[] = []
      for (const method of ['sync', 'datasync'] as const) {
        const original = proto[method]
        vi.spyOn(proto, method).mockImplementation(async function (this: { fd: number }) {
          synced.push(readlinkSync(`/proc/self/fd/${this.fd}`))
          return original.call(this)
        })
      }
      const store = createFileSessionStore({ dir, fsync: true })
      stores.push(store)
      await store.create({ id: 'p' })
      expect(synced).toContain(join(dir, 'p', 'session.json.tmp'))
      synced.length = 0
      await store.update('p', { title: 'renamed' })
      expect(synced).toContain(join(dir, 'p', 'session.json.tmp'))
    },
  )

  /**
   * Logs, relative to the store's directory, each rename (by its new name) and each sync (by the
   * path of the file or directory synced), in order.
   */
  async function logRenamesAndSyncs(): Promise<string[]> {
    const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')
    const log: string[] = []
    vi.mocked(rename).mockImplementation(async (from, to) => {
      await actual.rename(from, to)
      log.push(`rename ${relative(dir, String(to))}`)
    })
    const probe = await open(join(outside, 'probe'), 'w')
    const proto = Object.getPrototypeOf(probe) as Record<'sync' | 'datasync', () => Promise<void>>
    await probe.close()
    for (const method of ['sync', 'datasync'] as const) {
      const original = proto[method]
      vi.spyOn(proto, method).mockImplementation(async function (this: { fd: number }) {
        const path = readlinkSync(`/proc/self/fd/${this.fd}`)
        await original.call(this)
        log.push(`sync ${relative(dir, path) || '.'}`)
      })
    }
    return log
  }
  /** What the log says happened after `entry` (the last one by that name). */
  const after = (log: string[], entry: string) => log.slice(log.lastIndexOf(entry) + 1)

  // A rename is a change to the directory: until the directory is synced, a power loss can undo
  // it, leaving the old session.json (or none, for a new session).
  test.runIf(existsSync('/proc/self/fd'))(
    'with fsync on, the session directory is synced after session.json is renamed into place',
    async () => {
      const store = createFileSessionStore({ dir, fsync: true })
      stores.push(store)
      const log = await logRenamesAndSyncs()
      await store.create({ id: 'p' })
      expect(after(log, 'rename p/session.json')).toContain('sync p')
      // The new session's own entry in the store's directory too.
      expect(log).toContain('sync .')
      log.length = 0
      await store.update('p', { title: 'renamed' })
      expect(log).toContain('rename p/session.json')
      expect(after(log, 'rename p/session.json')).toContain('sync p')
    },
  )

  test.runIf(existsSync('/proc/self/fd'))(
    'with fsync on, a deletion is synced: the session does not come back after a power loss',
    async () => {
      const store = createFileSessionStore({ dir, fsync: true })
      stores.push(store)
      const log = await logRenamesAndSyncs()
      await store.delete('s')
      const moved = log.find((entry) => entry.startsWith('rename .deleted-s-'))
      expect(moved).toBeDefined()
      expect(after(log, moved!)).toContain('sync .')
    },
  )

  test.runIf(existsSync('/proc/self/fd'))('with fsync off, no directory is synced', async () => {
    const store = createFileSessionStore({ dir, fsync: false })
    stores.push(store)
    const log = await logRenamesAndSyncs()
    await store.create({ id: 'p' })
    await store.update('p', { title: 'renamed' })
    await store.delete('p')
    expect(log.filter((entry) => entry.startsWith('sync'))).toEqual([])
  })

  /** Makes opening a directory of the store fail with `code`, as on a platform that cannot. */
  async function failOpeningDirectories(code: string): Promise<void> {
    const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')
    vi.mocked(open).mockImplementation(async (path, ...rest) => {
      const target = String(path)
      if (target === dir || target === join(dir, 'p') || target === join(dir, 's')) {
        throw Object.assign(new Error(`${code}: cannot open a directory`), { code })
      }
      return actual.open(path, ...rest)
    })
  }

  test.each(['EISDIR', 'EPERM', 'EINVAL'])(
    'a platform that cannot open a directory for syncing (%s) still creates, updates and deletes',
    async (code) => {
      await failOpeningDirectories(code)
      const store = createFileSessionStore({ dir, fsync: true })
      stores.push(store)
      await store.create({ id: 'p' })
      expect(await store.update('p', { title: 'renamed' })).toMatchObject({ title: 'renamed' })
      await store.delete('s')
      expect((await store.list()).map((info) => info.id)).toEqual(['p'])
    },
  )

  test('any other failure to sync a directory fails the write: it may not survive a power loss', async () => {
    const store = createFileSessionStore({ dir, fsync: true })
    stores.push(store)
    await store.create({ id: 'p' })
    await failOpeningDirectories('EIO')
    expect(await codeOf(store.update('p', { title: 'renamed' }))).toBe('EIO')
  })
})

test('a session deleted while its writer lock is being taken is session_not_found', async () => {
  const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')
  // Another process deletes the session between the lock's temp file and its link.
  vi.mocked(link).mockImplementationOnce(async (from, to) => {
    rmSync(join(dir, 's'), { recursive: true, force: true })
    return actual.link(from, to)
  })
  expect(await codeOf(openStore().append('s', [record('r3')]))).toBe('session_not_found')
  expect(existsSync(join(dir, 's'))).toBe(false)
})

// Two creates of one id: the one that made the directory may take the lock only after the other
// (which found the directory there and took the lock first) created the session and let it go.
test('a create whose directory another create took over never removes the session that one made', async () => {
  const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')
  const other = openStore()
  // Between this create's mkdir and its lock: another store (or process) creates the session in
  // that directory, appends to it and closes.
  vi.mocked(link).mockImplementationOnce(async (from, to) => {
    await other.create({ id: 'x', title: 'theirs' })
    await other.append('x', [record('t1')])
    await other.close()
    return actual.link(from, to)
  })
  expect(await codeOf(openStore().create({ id: 'x', title: 'ours' }))).toBe('session_exists')
  const reader = openStore()
  expect(await reader.info('x')).toMatchObject({ title: 'theirs', recordCount: 1 })
  expect((await reader.read('x')).map((e) => e.id)).toEqual(['t1'])
})

/**
 * Makes history writes stop half-way and fail with EIO, and every truncate of a file fail with EIO
 * too: a failing disk, on which the store cannot cut a failed batch off again. The first write
 * puts the batch's first line on disk whole.
 */
async function failWritesAndTruncates(): Promise<void> {
  await failNextWriteHalfWay('EIO')
  const probe = await open(join(outside, 'probe'), 'w')
  const proto = Object.getPrototypeOf(probe) as { truncate: (...args: unknown[]) => Promise<unknown> }
  await probe.close()
  vi.spyOn(proto, 'truncate').mockRejectedValue(
    Object.assign(new Error('EIO: i/o error, ftruncate'), { code: 'EIO', errno: -5 }),
  )
}

describe('a failing disk that cannot cut a failed append off', () => {
  const batch = [record('f1', 'a'.repeat(100)), record('f2', 'b'.repeat(100)), record('f3', 'c'.repeat(100))]

  test('marks the session broken: every later operation on it fails, nothing of the batch is read', async () => {
    const store = openStore()
    await store.append('s', [record('r3')])
    await failWritesAndTruncates()
    expect(await codeOf(store.append('s', batch))).toBe('EIO')
    // The failed batch's first line is whole on disk.
    expect(readFileSync(join(dir, 's', 'history.jsonl'), 'utf8')).toContain('"f1"')
    const broken = await store.read('s').catch((error: unknown) => error)
    expect(SessionError.is(broken) && [broken.code, broken.sessionId]).toEqual(['session_broken', 's'])
    expect((broken as Error).cause).toMatchObject({ code: 'EIO' })
    expect(await codeOf(store.append('s', [record('r4')]))).toBe('session_broken')
    expect(await codeOf(store.info('s'))).toBe('session_broken')
    expect(await codeOf(store.update('s', { title: 't' }))).toBe('session_broken')
    expect(await codeOf(store.acquire('s'))).toBe('session_broken')
    expect(await codeOf(collect(store.readBatches!('s')))).toBe('session_broken')
    expect(await codeOf(store.close())).toBe('session_broken')
  })

  test('another store reads only the acknowledged records, and the next writer cuts the batch off', async () => {
    const store = openStore()
    await store.append('s', [record('r3')])
    await failWritesAndTruncates()
    expect(await codeOf(store.append('s', batch))).toBe('EIO')
    const reader = openStore()
    expect((await reader.read('s')).map((e) => e.id)).toEqual(['r1', 'r2', 'r3'])
    expect((await collect(reader.readBatches!('s', { batchSize: 1 }))).map((e) => e.id)).toEqual([
      'r1',
      'r2',
      'r3',
    ])
    expect(await reader.info('s')).toMatchObject({ recordCount: 3 })
    expect(await codeOf(store.close())).toBe('session_broken')
    vi.restoreAllMocks()

    // Reopened once the disk works again: the failed batch is cut off before anything is appended.
    const writer = openStore()
    await writer.append('s', [record('r4')])
    await writer.close()
    expect(warnings.filter((w) => w.type === 'failed_append_repaired')).toEqual([
      expect.objectContaining({ sessionId: 's', file: join(dir, 's', 'history.jsonl') }),
    ])
    expect((await openStore().read('s')).map((e) => e.id)).toEqual(['r1', 'r2', 'r3', 'r4'])
    expect(await openStore().info('s')).toMatchObject({ recordCount: 4 })
  })

  test('when the metadata cannot say where the records end either, the lock stays: no writer appends after the batch', async () => {
    const store = openStore()
    await store.append('s', [record('r3')])
    await failWritesAndTruncates()
    const probe = await open(join(outside, 'probe'), 'w')
    const proto = Object.getPrototypeOf(probe) as { writeFile: (...args: unknown[]) => Promise<unknown> }
    await probe.close()
    vi.spyOn(proto, 'writeFile').mockRejectedValue(
      Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }),
    )
    expect(await codeOf(store.append('s', batch))).toBe('EIO')
    expect(await codeOf(store.close())).toBe('session_broken')
    vi.restoreAllMocks()
    expect(existsSync(join(dir, 's', 'writer.lock'))).toBe(true)
    expect(await codeOf(openStore().append('s', [record('r4')]))).toBe('session_locked')
  })

  test('session_broken says where the acknowledged records end, for cutting the file by hand', async () => {
    const store = openStore()
    await store.append('s', [record('r3')])
    const history = join(dir, 's', 'history.jsonl')
    const end = readFileSync(history).length
    await failWritesAndTruncates()
    await failMetadataWrites()
    expect(await codeOf(store.append('s', batch))).toBe('EIO')
    const broken = await store.close().catch((error: unknown) => error)
    expect(SessionError.is(broken) && broken.code).toBe('session_broken')
    expect((broken as Error).message).toContain(`end at byte ${end} of ${history}`)
  })

  test('the limit: when the metadata cannot say where the records end, readers elsewhere and, after a restart, the next writer take the lines as records', async () => {
    const store = openStore()
    await store.append('s', [record('r3')])
    await failWritesAndTruncates()
    await failMetadataWrites()
    expect(await codeOf(store.append('s', batch))).toBe('EIO')
    expect(await codeOf(store.close())).toBe('session_broken')
    vi.restoreAllMocks()
    // Readers never take the lock: the failed batch's whole first line reads as a record.
    expect((await openStore().read('s')).map((e) => e.id)).toEqual(['r1', 'r2', 'r3', 'f1'])
    // A restart: the kept lock is now an earlier process's (a restarted container's same pid).
    const lockFile = join(dir, 's', 'writer.lock')
    const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as object
    writeFileSync(lockFile, JSON.stringify({ ...lock, processStart: ourStart() - 60_000 }))
    warnings = []
    const writer = openStore()
    await writer.append('s', [record('r4')])
    await writer.close()
    // Only the batch's cut-off last line goes, as after a crash; its whole first line stays.
    expect(warnings.map((w) => w.type)).toEqual(['stale_lock_removed', 'torn_tail_repaired'])
    expect((await openStore().read('s')).map((e) => e.id)).toEqual(['r1', 'r2', 'r3', 'f1', 'r4'])
  })
})

/** Makes every metadata write fail with EIO: session.json cannot say where the records end. */
async function failMetadataWrites(): Promise<void> {
  const probe = await open(join(outside, 'probe'), 'w')
  const proto = Object.getPrototypeOf(probe) as { writeFile: (...args: unknown[]) => Promise<unknown> }
  await probe.close()
  vi.spyOn(proto, 'writeFile').mockRejectedValue(
    Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }),
  )
}

async function collect(batches: AsyncIterable<HistoryEvent[]>): Promise<HistoryEvent[]> {
  const all: HistoryEvent[] = []
  for await (const batch of batches) all.push(...batch)
  return all
}

describe('metadata that is not what the types say (a caller outside TypeScript)', () => {
  const bad: [string, Record<string, unknown>][] = [
    ['a title that is a number', { title: 42 }],
    ['a model that is an object', { model: { name: 'x' } }],
    ['a provider that is null', { provider: null }],
  ]
  test.each(bad)(
    'update with %s is refused with invalid_metadata; the session stays readable',
    async (_, patch) => {
      const store = openStore()
      expect(await codeOf(store.update('s', patch as never))).toBe('invalid_metadata')
      await store.close()
      const again = openStore()
      expect((await again.read('s')).map((e) => e.id)).toEqual(['r1', 'r2'])
      expect(await again.info('s')).not.toHaveProperty(Object.keys(patch)[0]!)
    },
  )

  test.each([
    ...bad,
    ['a sub-agent link without a name', { subAgent: { parentToolCallId: 'c' } }],
    ['a fork origin that is a string', { forkedFrom: 's' }],
    ['a parent session that is a number', { parentSessionId: 7 }],
  ])('create with %s is refused with invalid_metadata and creates nothing', async (_, init) => {
    const store = openStore()
    expect(await codeOf(store.create({ id: 'n', ...init } as never))).toBe('invalid_metadata')
    expect(existsSync(join(dir, 'n', 'session.json'))).toBe(false)
    expect((await store.list()).map((s) => s.id)).toEqual(['s'])
  })
})

describe('a store whose directory cannot be made', () => {
  // Node's own recursive mkdir never returns under Linux's /proc: a mistyped directory hung there.
  test.runIf(process.platform === 'linux')(
    'fails create with the system error, under /proc too',
    async () => {
      const store = createFileSessionStore({ dir: '/proc/kode-no-such-dir/sessions' })
      stores.push(store)
      await expect(store.create({ id: 's1' })).rejects.toMatchObject({ code: 'ENOENT' })
    },
  )

  test('makes missing parents, and fails when a parent is a file', async () => {
    const nested = createFileSessionStore({ dir: join(dir, 'a', 'b', 'c') })
    stores.push(nested)
    await nested.create({ id: 's1' })
    expect(readdirSync(join(dir, 'a', 'b', 'c'))).toContain('s1')
    writeFileSync(join(dir, 'file'), 'x')
    const underFile = createFileSessionStore({ dir: join(dir, 'file', 'sessions') })
    stores.push(underFile)
    await expect(underFile.create({ id: 's1' })).rejects.toMatchObject({ code: 'ENOTDIR' })
  })
})
