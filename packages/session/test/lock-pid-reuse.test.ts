import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LockHolder } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { acquireLock, type HeldLock } from '../src/store/file/lock.js'

// A lock whose owner died while its pid went to another process that runs now (pids wrap around
// on a long-running host). `process.kill(pid, 0)` finds that process alive; on Linux the lock also
// records its owner's start as /proc shows it, which the new process does not share. The lock
// files are real ones, taken by this process and then pointed at another live process's pid: a
// child this test starts, well after this process started. (Not this process's parent: a shell
// that started it may have started within the same clock tick, and /proc could not tell them apart.)

let dir: string
let lockFile: string
const held: HeldLock[] = []
const linux = process.platform === 'linux'
let other: ChildProcess
/** The pid of another live process, which started after this one. */
let otherPid: number

beforeAll(async () => {
  other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
  await new Promise((resolve, reject) => other.once('spawn', resolve).once('error', reject))
  otherPid = other.pid!
})
afterAll(() => {
  other.kill('SIGKILL')
})

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kode-lock-pid-reuse-'))
  lockFile = join(dir, 'writer.lock')
})
afterEach(async () => {
  await Promise.allSettled(held.splice(0).map((lock) => lock.release()))
  rmSync(dir, { recursive: true, force: true })
})

type LockFile = Record<string, unknown>

/** The content of a lock this process takes (and gives back at once). */
async function ourLock(): Promise<LockFile> {
  const lock = await acquireLock(lockFile, 's', Date.now(), () => {})
  const content = JSON.parse(readFileSync(lockFile, 'utf8')) as LockFile
  await lock.release()
  return content
}

/** Takes the lock: `taken` (and the stale holders removed), or the error. */
async function take(): Promise<{ taken: LockHolder[] } | { refused: unknown }> {
  const stale: LockHolder[] = []
  try {
    held.push(await acquireLock(lockFile, 's', Date.now(), (holder) => stale.push(holder)))
    return { taken: stale }
  } catch (error) {
    return { refused: error }
  }
}

const refused = { refused: expect.objectContaining({ code: 'session_locked', owner: 'other-process' }) }

describe('a lock whose pid another live process has now', () => {
  test('is stale on Linux, where the lock recorded its owner’s start: removed and taken', async () => {
    const lock = await ourLock()
    writeFileSync(lockFile, JSON.stringify({ ...lock, pid: otherPid }))
    expect(await take()).toEqual(linux ? { taken: [expect.objectContaining({ pid: otherPid })] } : refused)
  })

  test('an older lock file without the start is judged by its pid as before: refused', async () => {
    const { procStart: _, procNamespaces: __, ...older } = await ourLock()
    writeFileSync(lockFile, JSON.stringify({ ...older, pid: otherPid }))
    expect(await take()).toEqual(refused)
  })

  test('a start read in other namespaces (another container) is not compared: refused', async () => {
    const lock = await ourLock()
    const namespaces = 'pid:[1] time:[1]'
    writeFileSync(lockFile, JSON.stringify({ ...lock, pid: otherPid, procNamespaces: namespaces }))
    expect(await take()).toEqual(refused)
  })

  test('the start that process has now is its own: refused', async () => {
    const lock = await ourLock()
    const stat = linux ? readFileSync(`/proc/${otherPid}/stat`, 'utf8') : ''
    const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
    writeFileSync(lockFile, JSON.stringify({ ...lock, pid: otherPid, procStart: ticks }))
    expect(await take()).toEqual(refused)
  })
})

test('the file store’s lock records its owner’s start as /proc shows it on Linux, and nothing elsewhere', async () => {
  const store = createFileSessionStore({ dir, fsync: false })
  try {
    await store.create({ id: 'one' })
    const lock = JSON.parse(readFileSync(join(dir, 'one', 'writer.lock'), 'utf8')) as LockFile
    if (linux) {
      const stat = readFileSync('/proc/self/stat', 'utf8')
      expect(lock.procStart).toBe(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
      expect(lock.procNamespaces).toMatch(/^pid:\[\d+\] (time:\[\d+\])?$/)
    } else {
      expect(lock).not.toHaveProperty('procStart')
    }
  } finally {
    await store.close()
  }
})
