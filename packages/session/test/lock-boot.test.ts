import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LockHolder } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type BootIdReader, readBootId } from '../src/store/file/boot-id.js'
import { acquireLock, type HeldLock } from '../src/store/file/lock.js'
import { ourStart } from './helpers/process-start.js'

// A lock file kept across a reboot: pids and the monotonic clock start over at boot, so only the
// boot id tells such a lock from a live one. The boot is played by the injected reader; the lock
// files are real ones in a temporary directory.

let dir: string
let lockFile: string
const held: HeldLock[] = []

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kode-lock-boot-'))
  lockFile = join(dir, 'writer.lock')
})
afterEach(async () => {
  await Promise.allSettled(held.splice(0).map((lock) => lock.release()))
  rmSync(dir, { recursive: true, force: true })
})

const boot =
  (id: string | undefined): BootIdReader =>
  async () =>
    id

/** A lock file as a process of this host with `pid` left it; `bootId` absent as in older files. */
function writeLock(pid: number, bootId?: string): void {
  const lock = { pid, hostname: hostname(), acquiredAt: Date.now(), token: 'old', processStart: ourStart() }
  writeFileSync(lockFile, JSON.stringify(bootId === undefined ? lock : { ...lock, bootId }))
}

/** Takes the lock in the boot `reader` reads: `taken` (and the stale holders removed), or the error. */
async function take(reader: BootIdReader): Promise<{ taken: LockHolder[] } | { refused: unknown }> {
  const stale: LockHolder[] = []
  try {
    held.push(await acquireLock(lockFile, 's', Date.now(), (holder) => stale.push(holder), reader))
    return { taken: stale }
  } catch (error) {
    return { refused: error }
  }
}

const refused = (owner: string) => ({ refused: expect.objectContaining({ code: 'session_locked', owner }) })

describe('a lock taken in another boot of this host', () => {
  test('carrying our own pid and a process start like ours, is stale: removed and taken', async () => {
    writeLock(process.pid, 'boot-a')
    expect(await take(boot('boot-b'))).toEqual({ taken: [expect.objectContaining({ pid: process.pid })] })
  })

  test('carrying the pid of a process running now, is stale: removed and taken', async () => {
    writeLock(process.ppid, 'boot-a')
    expect(await take(boot('boot-b'))).toEqual({ taken: [expect.objectContaining({ pid: process.ppid })] })
  })
})

describe('a lock taken in this boot is judged as before', () => {
  test('our own pid and process start: live, refused', async () => {
    writeLock(process.pid, 'boot-a')
    expect(await take(boot('boot-a'))).toEqual(refused('this-process'))
  })

  test('a process running now: live, refused', async () => {
    writeLock(process.ppid, 'boot-a')
    expect(await take(boot('boot-a'))).toEqual(refused('other-process'))
  })
})

describe('without boot ids on both sides, the pid decides as before', () => {
  test('an older lock file without a boot id is still read, and a live owner still refuses', async () => {
    writeLock(process.pid)
    expect(await take(boot('boot-b'))).toEqual(refused('this-process'))
    writeLock(process.ppid)
    expect(await take(boot('boot-b'))).toEqual(refused('other-process'))
  })

  test('on a host without a boot id, a lock naming one is judged by its pid', async () => {
    writeLock(process.pid, 'boot-a')
    expect(await take(boot(undefined))).toEqual(refused('this-process'))
  })
})

describe('the lock records its boot', () => {
  test('the boot id read, when there is one', async () => {
    expect(await take(boot('boot-b'))).toEqual({ taken: [] })
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, bootId: 'boot-b' })
  })

  test('no boot id on a host without one', async () => {
    expect(await take(boot(undefined))).toEqual({ taken: [] })
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).not.toHaveProperty('bootId')
  })

  test("the file store records the host's own: Linux's boot id, none elsewhere", async () => {
    const linux = existsSync('/proc/sys/kernel/random/boot_id')
    const expected = linux ? readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() : undefined
    expect(await readBootId()).toBe(process.platform === 'linux' ? expected : undefined)
    const store = createFileSessionStore({ dir, fsync: false })
    try {
      await store.create({ id: 'one' })
      const lock = JSON.parse(readFileSync(join(dir, 'one', 'writer.lock'), 'utf8')) as { bootId?: string }
      expect(lock.bootId).toBe(process.platform === 'linux' ? expected : undefined)
    } finally {
      await store.close()
    }
  })
})
