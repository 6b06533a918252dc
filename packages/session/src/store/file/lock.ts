import { createHmac, randomUUID } from 'node:crypto'
import { type FileHandle, link, lstat, open, rename, unlink, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import {
  type LockHolder,
  type LockOwner,
  type SessionError,
  SessionLockedError,
  sessionNotFound,
} from '../../errors.js'
import { type BootIdReader, readBootId } from './boot-id.js'
import type { FileIdentity } from './file-identity.js'
import { type MachineIdReader, readMachineId } from './machine-id.js'
import { READ } from './no-follow.js'
import { type ProcStart, readOwnProcStart, readProcStartTicks } from './proc-start.js'

/** A writer lock this process holds. */
export interface HeldLock {
  readonly file: string
  /**
   * Whether the lock file is still the one this lock placed (the same file, not a copy with our
   * content). False once another process moved it away: one that judged it stale in a race with a
   * third taking the session can fail to put it back (see `removeIfSame`), and the third then
   * holds the session.
   */
  held(): Promise<boolean>
  /** Removes the lock file if it is still ours. */
  release(): Promise<void>
}

interface LockContent extends LockHolder {
  /** Tells our lock from a later one by the same pid. */
  token: string
  /**
   * When the owner process started, in ms of the host's monotonic clock (see `observer`): tells
   * the owner from a later process that got the same pid. Absent in older lock files.
   */
  processStart?: number
  /**
   * The host's boot the lock was taken in (see `BootIdReader`): pids and the monotonic clock start
   * over at boot, so neither tells a lock from before a reboot. Absent in older lock files and on
   * hosts without a boot id.
   */
  bootId?: string
  /**
   * The machine the lock was taken on (see `MachineIdReader`), as `machineTag` of its id: hostnames
   * repeat across machines, and a boot id or pid means nothing on another machine. Older lock files
   * hold the machine id itself; absent in still older ones and on hosts without a machine id.
   */
  machineId?: string
  /**
   * The owner's start as Linux's `/proc` shows it (`ProcStart.ticks`), and the namespaces it was
   * read in (`ProcStart.namespaces`): tells the owner from a later process that got its pid while
   * it runs. Absent in older lock files and where `/proc` cannot tell.
   */
  procStart?: string
  procNamespaces?: string
}

/** The process looking at a lock: who it is, and when it started. */
interface Observer {
  pid: number
  hostname: string
  /** Wall-clock ms (the locks' `acquiredAt` clock) at which this process started. */
  startedAt: number
  /** Monotonic ms at which this process started. */
  processStart: number
  /** The host's current boot, if it has an id. */
  bootId: string | undefined
  /** This machine's id, if it has one: compared with older lock files, never written. */
  machineId: string | undefined
  /** What a lock file records of it (see `machineTag`). */
  machineTag: string | undefined
  /** Its start as `/proc` shows it, where it does. */
  procStart: ProcStart | undefined
}

/**
 * Two readings of this process's start. The monotonic one is the same in every thread and does not
 * move when the wall clock is set, so it identifies the process exactly; the wall-clock one is only
 * for lock files written before the monotonic one was recorded.
 */
async function observer(bootId: BootIdReader, machineId: MachineIdReader): Promise<Observer> {
  const [current, machine, procStart] = await Promise.all([bootId(), machineId(), readOwnProcStart()])
  const uptimeMs = process.uptime() * 1000
  return {
    pid: process.pid,
    hostname: hostname(),
    startedAt: Date.now() - uptimeMs,
    processStart: monotonicStart(),
    bootId: current,
    machineId: machine,
    machineTag: machine === undefined ? undefined : machineTag(machine),
    procStart,
  }
}

/**
 * What a lock records of the machine id: machine-id(5) asks that the id itself, confidential, never
 * be exposed, and that an application needing a stable id of the machine use a keyed hash of it
 * (systemd's `sd_id128_get_machine_app_specific`: HMAC-SHA256 keyed by the id, 128 bits of it). A
 * lock file sits in a session directory, which may be shared or copied whole.
 */
function machineTag(machineId: string): string {
  return createHmac('sha256', machineId).update(MACHINE_TAG_APP).digest('hex').slice(0, 32)
}

/** The application id `machineTag` hashes: the same in every Kode, so every version compares alike. */
const MACHINE_TAG_APP = 'kode session writer lock'

/**
 * This process's start on the monotonic clock: now minus the uptime, both read from that clock.
 * The two readings are apart by however long the thread ran (or was descheduled, on a loaded
 * machine: milliseconds) between them, and that gap is an error in the result, so the uptime is
 * read between two readings of the clock and a reading whose bracket is wider than
 * {@link TIGHT_READ_MS} is taken again. Two readings of one process then differ by at most that
 * much, well inside {@link SAME_START_MS}: a live lock of this process is never judged stale.
 */
function monotonicStart(): number {
  let best = { gap: Number.POSITIVE_INFINITY, start: 0 }
  for (let attempt = 0; attempt < START_READ_ATTEMPTS && best.gap > TIGHT_READ_MS; attempt++) {
    const before = monotonicMs()
    const uptimeMs = process.uptime() * 1000
    const after = monotonicMs()
    if (after - before < best.gap) best = { gap: after - before, start: (before + after) / 2 - uptimeMs }
  }
  return best.start
}

function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6
}

/** How far apart the clock readings around the uptime may be (they take microseconds). */
const TIGHT_READ_MS = 0.1
/** Every reading stalled this often in a row is not a loaded machine but a stopped one. */
const START_READ_ATTEMPTS = 8

// Readings of one process's start differ by at most TIGHT_READ_MS (see monotonicStart); a
// restarted process starts at least a process launch (tens of ms) after its predecessor.
const SAME_START_MS = 1

/**
 * Takes the writer lock of one session: a lock file created atomically (a complete temp file
 * hard-linked into place, which fails if the lock exists), holding the owner's pid and hostname.
 * A lock whose owner ran on this host and no longer runs (killed, crashed) is stale: it is removed,
 * `onStale` is told, and the lock is taken. That includes a lock carrying our own pid that an
 * earlier process took (a container restarted with the same pid, typically 1), and, where the host
 * has a boot id (`bootId`, Linux's by default), any lock taken in an earlier boot of this host. A
 * live owner (another store in this process too), or one on another host, means refusal; a lock
 * naming another machine id (`machineId`, `/etc/machine-id` by default) is another host's even
 * under our hostname.
 */
export async function acquireLock(
  file: string,
  sessionId: string,
  now: number,
  onStale: (holder: LockHolder) => void,
  bootId: BootIdReader = readBootId,
  machineId: MachineIdReader = readMachineId,
): Promise<HeldLock> {
  const self = await observer(bootId, machineId)
  const content: LockContent = {
    pid: self.pid,
    hostname: self.hostname,
    acquiredAt: now,
    token: randomUUID(),
    processStart: self.processStart,
    ...(self.bootId === undefined ? {} : { bootId: self.bootId }),
    ...(self.machineTag === undefined ? {} : { machineId: self.machineTag }),
    ...(self.procStart === undefined
      ? {}
      : { procStart: self.procStart.ticks, procNamespaces: self.procStart.namespaces }),
  }
  const temp = `${file}.${content.token}.tmp`
  try {
    // A full disk fails the write after the file was created: it is removed below all the same.
    await writeFile(temp, JSON.stringify(content), { flag: 'wx' })
    // Retried when a stale lock was removed or the lock vanished between our attempts.
    for (let round = 0; round < 3; round++) {
      const placed = await createFrom(temp, file, content)
      if (placed) return heldLock(file, content.token, placed)
      const holder = await readHolder(file)
      if (holder === 'missing') continue
      if (holder === 'unreadable') throw new SessionLockedError(sessionId, file, undefined, 'unknown')
      if (!(await isStale(holder, self))) {
        throw new SessionLockedError(sessionId, file, publicHolder(holder), ownerOf(holder, self))
      }
      if (await removeIfSame(file, holder, content.token)) onStale(holder)
    }
    throw new SessionLockedError(sessionId, file, undefined, 'unknown')
  } catch (error) {
    // The session's directory is gone: it never existed, or was deleted while the lock was taken.
    throw missingSession(error, sessionId) ?? error
  } finally {
    await unlink(temp).catch(() => {})
  }
}

/** Places the lock, returning the file it is; false when a lock already exists. */
async function createFrom(temp: string, file: string, content: LockContent): Promise<FileIdentity | false> {
  // The link is the temp file under the lock's name: the same file, known before it is placed.
  const { dev, ino } = await lstat(temp, { bigint: true })
  try {
    await link(temp, file)
    return { dev, ino }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error
  }
  // Filesystems without hard links: exclusive create; a crash between create and write leaves
  // an unreadable lock, which is refused rather than guessed at.
  let handle: FileHandle
  try {
    handle = await open(file, 'wx')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  let placed: FileIdentity
  try {
    await handle.writeFile(JSON.stringify(content))
    const stats = await handle.stat({ bigint: true })
    placed = { dev: stats.dev, ino: stats.ino }
  } catch (error) {
    // Created by us and left without its content (a full disk): removed, or it would lock every
    // writer out of the session until someone deleted it by hand.
    await handle.close().catch(() => {})
    await unlink(file).catch(() => {})
    throw error
  }
  await handle.close()
  return placed
}

async function readHolder(file: string): Promise<LockContent | 'missing' | 'unreadable'> {
  let text: string
  try {
    // Never through a link planted as the lock, nor waiting on a FIFO: such a lock is unreadable,
    // so refused.
    const handle = await open(file, READ)
    try {
      // A FIFO, a directory (READ does not wait on a FIFO): no lock content, so refused.
      if (!(await handle.stat()).isFile()) return 'unreadable'
      text = await handle.readFile('utf8')
    } finally {
      await handle.close()
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return 'missing'
    // A socket cannot be opened at all (ENXIO): no lock content either.
    if (code === 'ELOOP' || code === 'EMLINK' || code === 'ENXIO') return 'unreadable'
    throw error
  }
  try {
    const value = JSON.parse(text) as Partial<LockContent>
    if (typeof value.pid === 'number' && typeof value.hostname === 'string') {
      const holder: LockContent = {
        pid: value.pid,
        hostname: value.hostname,
        acquiredAt: typeof value.acquiredAt === 'number' ? value.acquiredAt : 0,
        token: typeof value.token === 'string' ? value.token : '',
      }
      if (typeof value.processStart === 'number') holder.processStart = value.processStart
      if (typeof value.bootId === 'string') holder.bootId = value.bootId
      if (typeof value.machineId === 'string') holder.machineId = value.machineId
      if (typeof value.procStart === 'string' && typeof value.procNamespaces === 'string') {
        holder.procStart = value.procStart
        holder.procNamespaces = value.procNamespaces
      }
      return holder
    }
  } catch {
    // fall through
  }
  return 'unreadable'
}

/**
 * Stale: the owner ran on this host and is gone. Another host's lock is never judged (see
 * `onThisHost`). A lock taken
 * in another boot of this host is stale whatever its pid (every process of that boot is gone);
 * without boot ids on both sides (an older lock file, a host without one), the pid decides. A lock
 * with our own pid is ours only if it was taken after this process started: `process.kill` cannot
 * tell, since our pid is always alive. Nor can it tell that another live process got the owner's
 * pid: where the lock records the owner's start as `/proc` shows it, and we read `/proc` in the
 * same namespaces, a process of that pid that started at another time is not the owner.
 */
async function isStale(holder: LockContent, self: Observer): Promise<boolean> {
  if (!onThisHost(holder, self)) return false
  if (holder.bootId !== undefined && self.bootId !== undefined && holder.bootId !== self.bootId) return true
  if (holder.pid === self.pid) {
    return holder.processStart !== undefined
      ? Math.abs(holder.processStart - self.processStart) > SAME_START_MS
      : holder.acquiredAt < self.startedAt
  }
  if (await pidReused(holder, self)) return true
  try {
    process.kill(holder.pid, 0)
    return false
  } catch (error) {
    // ESRCH: no such process; EPERM: it runs, as another user. Anything else means the check could
    // not be made (Deno without --allow-run refuses it): thrown, so the writer is told why, rather
    // than told for ever that a process which may be long gone holds the session.
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ESRCH') return true
    if (code === 'EPERM') return false
    throw error
  }
}

/**
 * Whether the holder's pid now names another process than the one that took the lock: one whose
 * start, as `/proc` shows it, is not the one the lock records. False when that cannot be told (an
 * older lock file, readings made in other namespaces, no such process or no `/proc`): the pid
 * alone decides then, as before.
 */
async function pidReused(holder: LockContent, self: Observer): Promise<boolean> {
  const { procStart, procNamespaces } = holder
  if (procStart === undefined || self.procStart === undefined) return false
  if (procNamespaces !== self.procStart.namespaces) return false
  const now = await readProcStartTicks(holder.pid)
  return now !== undefined && now !== procStart
}

/**
 * Removes the lock only if it is still the stale one we judged: it is moved aside first, and put
 * back if a live writer replaced it in between. The directory is not synced after the rename, as
 * after no other lock change: a lock only matters to live processes, and a power loss ends them
 * all, so a lock it brings back (this stale one, or the one taken after it) is stale again then.
 */
async function removeIfSame(file: string, stale: LockContent, ourToken: string): Promise<boolean> {
  const aside = `${file}.${ourToken}.stale`
  try {
    await rename(file, aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  const moved = await readHolder(aside)
  if (
    moved !== 'missing' &&
    moved !== 'unreadable' &&
    moved.token === stale.token &&
    moved.pid === stale.pid
  ) {
    await unlink(aside)
    return true
  }
  await link(aside, file).catch(() => {})
  await unlink(aside).catch(() => {})
  return false
}

/**
 * The lock was taken on this machine: same hostname and, when the lock names a machine, ours (by
 * its tag, or by the id itself in an older lock file). A lock naming one while we have none to
 * compare cannot be shown to be ours, so it counts as another host's: refused rather than broken
 * while its writer may live. A lock without one (an older file, a host without one) is judged by
 * hostname as before.
 */
function onThisHost(holder: LockContent, self: Observer): boolean {
  if (holder.hostname !== self.hostname) return false
  const { machineId } = holder
  if (machineId === undefined) return true
  return self.machineId !== undefined && (machineId === self.machineTag || machineId === self.machineId)
}

/** Where a live holder runs, relative to us. */
function ownerOf(holder: LockContent, self: Observer): LockOwner {
  if (!onThisHost(holder, self)) return 'other-host'
  return holder.pid === self.pid ? 'this-process' : 'other-process'
}

/** The holder as callers see it: without our internal token. */
function publicHolder({ pid, hostname, acquiredAt }: LockContent): LockHolder {
  return { pid, hostname, acquiredAt }
}

function heldLock(file: string, token: string, placed: FileIdentity): HeldLock {
  let released = false
  return {
    file,
    async held() {
      try {
        const now = await lstat(file, { bigint: true })
        if (now.dev === placed.dev && now.ino === placed.ino) return true
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
        throw error
      }
      // Another file, or a file system whose inode numbers are not stable (an SMB mount with
      // `noserverino`): the content decides, since our token is in our lock file alone.
      const holder = await readHolder(file)
      return typeof holder === 'object' && holder.token === token
    },
    async release() {
      if (released) return
      released = true
      const holder = await readHolder(file).catch(() => 'unreadable' as const)
      if (typeof holder === 'object' && holder.token === token) await unlink(file).catch(() => {})
    },
  }
}

function missingSession(error: unknown, sessionId: string): SessionError | undefined {
  // ENOTDIR: a file, not a session directory, has its name.
  const code = (error as NodeJS.ErrnoException).code
  if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined
  return sessionNotFound(sessionId, error)
}
