import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LockHolder } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import type { BootIdReader } from '../src/store/file/boot-id.js'
import { acquireLock, type HeldLock } from '../src/store/file/lock.js'
import { type MachineIdReader, readMachineId } from '../src/store/file/machine-id.js'
import { ourStart } from './helpers/process-start.js'

// Two machines with one hostname (containers with a fixed hostname, cloned hosts) sharing a
// session directory: only the machine id tells their locks apart, and a lock of the other machine
// must not be judged by this machine's boot id or pids. The machines and boots are played by the
// injected readers; the lock files are real ones in a temporary directory.

let dir: string
let lockFile: string
const held: HeldLock[] = []

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kode-lock-machine-'))
  lockFile = join(dir, 'writer.lock')
})
afterEach(async () => {
  await Promise.allSettled(held.splice(0).map((lock) => lock.release()))
  rmSync(dir, { recursive: true, force: true })
})

const reads =
  (id: string | undefined): BootIdReader & MachineIdReader =>
  async () =>
    id

/** A pid no process has now: that of a child that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', ''])
  if (child.pid === undefined) throw new Error('no child was started')
  return child.pid
}

/** A lock file left on a host of our hostname; `machineId` absent as in older files. */
function writeLock(pid: number, bootId: string, machineId?: string): void {
  const lock = {
    pid,
    hostname: hostname(),
    acquiredAt: Date.now(),
    token: 'old',
    processStart: ourStart(),
    bootId,
  }
  writeFileSync(lockFile, JSON.stringify(machineId === undefined ? lock : { ...lock, machineId }))
}

/** Takes the lock as machine `machine` in boot `boot`: `taken` (and the stale holders removed), or the error. */
async function take(
  boot: string | undefined,
  machine: string | undefined,
): Promise<{ taken: LockHolder[] } | { refused: unknown }> {
  const stale: LockHolder[] = []
  try {
    held.push(await acquireLock(lockFile, 's', Date.now(), (h) => stale.push(h), reads(boot), reads(machine)))
    return { taken: stale }
  } catch (error) {
    return { refused: error }
  }
}

const refused = (owner: string) => ({ refused: expect.objectContaining({ code: 'session_locked', owner }) })

describe('a lock of another machine with our hostname is judged as another host’s: refused', () => {
  test('from another boot id, with the pid of a process running here', async () => {
    writeLock(process.ppid, 'boot-a', 'machine-a')
    expect(await take('boot-b', 'machine-b')).toEqual(refused('other-host'))
  })

  test('from another boot id, with a pid no process has here', async () => {
    writeLock(deadPid(), 'boot-a', 'machine-a')
    expect(await take('boot-b', 'machine-b')).toEqual(refused('other-host'))
  })

  test('from the same boot id (containers of one kernel), with a pid no process has here', async () => {
    writeLock(deadPid(), 'boot-a', 'machine-a')
    expect(await take('boot-a', 'machine-b')).toEqual(refused('other-host'))
  })

  test('naming a machine id when this machine has none to compare', async () => {
    writeLock(deadPid(), 'boot-a', 'machine-a')
    expect(await take('boot-b', undefined)).toEqual(refused('other-host'))
  })

  test('its lock file is left as it was', async () => {
    writeLock(deadPid(), 'boot-a', 'machine-a')
    const before = readFileSync(lockFile, 'utf8')
    await take('boot-b', 'machine-b')
    expect(readFileSync(lockFile, 'utf8')).toBe(before)
  })
})

describe('a lock of this machine is judged by boot id and pid as before', () => {
  test('from another boot: stale whatever its pid', async () => {
    writeLock(process.ppid, 'boot-a', 'machine-a')
    expect(await take('boot-b', 'machine-a')).toEqual({
      taken: [expect.objectContaining({ pid: process.ppid })],
    })
  })

  test('from this boot, its owner gone: stale', async () => {
    const pid = deadPid()
    writeLock(pid, 'boot-a', 'machine-a')
    expect(await take('boot-a', 'machine-a')).toEqual({ taken: [expect.objectContaining({ pid })] })
  })

  test('from this boot, its owner running: refused', async () => {
    writeLock(process.ppid, 'boot-a', 'machine-a')
    expect(await take('boot-a', 'machine-a')).toEqual(refused('other-process'))
  })
})

describe('an older lock file without a machine id is judged as before', () => {
  test('from another boot: stale whatever its pid', async () => {
    writeLock(process.ppid, 'boot-a')
    expect(await take('boot-b', 'machine-b')).toEqual({
      taken: [expect.objectContaining({ pid: process.ppid })],
    })
  })

  test('from this boot, its owner gone: stale; running: refused', async () => {
    const pid = deadPid()
    writeLock(pid, 'boot-a')
    expect(await take('boot-a', 'machine-b')).toEqual({ taken: [expect.objectContaining({ pid })] })
    await Promise.all(held.splice(0).map((lock) => lock.release()))
    writeLock(process.ppid, 'boot-a')
    expect(await take('boot-a', 'machine-b')).toEqual(refused('other-process'))
  })
})

// machine-id(5): the id is confidential and must not be exposed; an application that needs a
// stable id of the machine uses a keyed hash of it. A lock file sits in a session directory,
// which may be shared (a network share, a volume) or copied whole (a backup, a bug report).
describe('the lock records its machine, never the machine id itself', () => {
  test('a keyed hash of the machine id read, when there is one', async () => {
    expect(await take('boot-b', 'machine-b')).toEqual({ taken: [] })
    const text = readFileSync(lockFile, 'utf8')
    expect(text).not.toContain('machine-b')
    const lock = JSON.parse(text) as { pid: number; machineId?: string }
    expect(lock.pid).toBe(process.pid)
    expect(lock.machineId).toMatch(/^[0-9a-f]{32}$/)
    await Promise.all(held.splice(0).map((h) => h.release()))
    // The same machine hashes it the same way; another does not.
    expect(await take('boot-b', 'machine-b')).toEqual({ taken: [] })
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ machineId: lock.machineId })
    await Promise.all(held.splice(0).map((h) => h.release()))
    expect(await take('boot-b', 'machine-c')).toEqual({ taken: [] })
    expect(JSON.parse(readFileSync(lockFile, 'utf8')).machineId).not.toBe(lock.machineId)
  })

  test('a lock this machine took is judged as this machine’s: its owner gone, stale; running, refused', async () => {
    expect(await take('boot-a', 'machine-a')).toEqual({ taken: [] })
    const recorded = JSON.parse(readFileSync(lockFile, 'utf8')) as { machineId: string }
    await Promise.all(held.splice(0).map((h) => h.release()))
    const pid = deadPid()
    writeLock(pid, 'boot-a', recorded.machineId)
    expect(await take('boot-a', 'machine-a')).toEqual({ taken: [expect.objectContaining({ pid })] })
    await Promise.all(held.splice(0).map((h) => h.release()))
    writeLock(process.ppid, 'boot-a', recorded.machineId)
    expect(await take('boot-a', 'machine-a')).toEqual(refused('other-process'))
    expect(await take('boot-a', 'machine-b')).toEqual(refused('other-host'))
  })

  test('an older lock file naming the machine id itself is still this machine’s', async () => {
    const pid = deadPid()
    writeLock(pid, 'boot-a', 'machine-a')
    expect(await take('boot-a', 'machine-a')).toEqual({ taken: [expect.objectContaining({ pid })] })
  })

  test('no machine id where there is none', async () => {
    expect(await take('boot-b', undefined)).toEqual({ taken: [] })
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).not.toHaveProperty('machineId')
  })

  test("the file store records a hash of the host's own: /etc/machine-id, else D-Bus's", async () => {
    const expected = firstReadable(['/etc/machine-id', '/var/lib/dbus/machine-id'])
    expect(await readMachineId()).toBe(expected)
    const store = createFileSessionStore({ dir, fsync: false })
    try {
      await store.create({ id: 'one' })
      const text = readFileSync(join(dir, 'one', 'writer.lock'), 'utf8')
      const lock = JSON.parse(text) as { machineId?: string }
      if (expected === undefined) expect(lock).not.toHaveProperty('machineId')
      else {
        expect(text).not.toContain(expected)
        expect(lock.machineId).toMatch(/^[0-9a-f]{32}$/)
      }
    } finally {
      await store.close()
    }
  })
})

function firstReadable(files: string[]): string | undefined {
  for (const file of files) {
    try {
      const id = readFileSync(file, 'utf8').trim()
      if (id !== '') return id
    } catch {
      // next
    }
  }
  return undefined
}
