import type { ChildProcess } from 'node:child_process'
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'

/** After SIGTERM, how long the tree has before SIGKILL. */
const TERM_GRACE_MS = 2_000
/** After SIGKILL, how long to wait for the tree to go before giving up (a process stuck in the kernel). */
const KILL_WAIT_MS = 5_000
const POLL_MS = 10
/**
 * How long a descendant noted without an identity (a `ps` that does not show start times) is
 * signalled: a few seconds, as `close()` takes, since a pid is not reused that fast.
 */
const UNIDENTIFIED_MS = 10_000

/**
 * A server and the processes it started (a browser, a language server, the real server behind an
 * `npx` wrapper): what stopping the server stops. They are found by walking the process table from
 * the server down, so they must be found while the server runs: once it exits, they are another
 * process's children. The server stays in the host's process group, so a terminal's Ctrl-C still
 * reaches the whole tree as it reaches the host. On Windows only the server is known.
 *
 * A descendant is noted with what tells it from a later process given the same pid (its start
 * time, and on Linux its session): one that is no longer the process noted is never signalled.
 * Where that cannot be read, one is only signalled within seconds of being noted.
 */
export interface ProcessTree {
  /** Notes the server's descendants now (before stopping it, while they are still its own). */
  survey(): void
  /**
   * Notes the server's descendants as they are now, forgetting those that left the tree (they
   * exited, or a process between them and the server did, or they detached): done while the
   * server runs, so that what it started can be stopped should it exit by itself.
   */
  follow(): void
  /**
   * Notes the descendants again (as `follow` does) every `ms` while the server runs, so that a
   * process it starts between requests is known too; only where that reads just the tree's own
   * entries (Linux's `/proc` children lists): elsewhere each note is a `ps` or a scan of the whole
   * process table, too much to repeat, and nothing is done. Returns the function that stops it.
   */
  followEvery(ms: number): () => void
  /** Whether the server or a descendant noted is still running. */
  alive(): boolean
  /** Signals the server and the descendants noted (surveying first while the server runs). */
  signal(name: NodeJS.Signals): void
}

/** A process as the process table shows it; `identity` tells it from a later one with its pid. */
interface ProcessEntry {
  pid: number
  parent: number
  /** Its start time (and session, on Linux); `undefined` where the table does not say. */
  identity: string | undefined
}

/** The tree of `child`, running as `pid`. */
export function processTree(child: ChildProcess, pid: number): ProcessTree {
  // By pid: the identity the process had when noted, and when that was.
  const known = new Map<number, { identity: string | undefined; at: number }>()
  const serverRuns = () => child.exitCode === null && child.signalCode === null
  const note = (found: readonly ProcessEntry[]) => {
    const at = Date.now()
    for (const { pid: descendant, identity } of found) known.set(descendant, { identity, at })
  }
  const survey = () => {
    if (serverRuns()) note(descendantsOf(pid))
  }
  let following = false
  /** Forgets the descendants noted that no longer run as the processes noted. */
  const forgetOthers = () => {
    const now = identitiesOf([...known.keys()])
    for (const [descendant, noted] of known) {
      const same =
        noted.identity === undefined
          ? Date.now() - noted.at < UNIDENTIFIED_MS
          : now.get(descendant) === noted.identity
      if (!same || !isRunning(descendant)) known.delete(descendant)
    }
  }
  /** Replaces what was noted with `found`, unless the server died during the walk. */
  const renote = (found: readonly ProcessEntry[]) => {
    // A server that exited while it was walked (a zombie Node has not reaped yet) shows no
    // children any more: what was noted is kept then, and what was found only added.
    if (isRunning(pid)) known.clear()
    note(found)
  }
  // Once the server has exited, what was noted is checked once, then only followed until it exits.
  let checkedAfterExit = false
  return {
    survey,
    follow: () => {
      if (!serverRuns()) return
      if (process.platform === 'linux') {
        // Walked from the server down through /proc's children lists: a few small reads, cheap
        // enough for every request (a scan of the whole process table is kept for `survey`).
        renote(linuxDescendants(pid) ?? descendantsOf(pid))
        return
      }
      // Elsewhere the table comes from `ps`, a process of its own: read without blocking the
      // host, one read at a time. Its result replaces what was noted only while the server
      // still runs (after an exit its descendants no longer show as such).
      if (following) return
      following = true
      descendantsLater(pid).then(
        (found) => {
          following = false
          if (serverRuns()) known.clear()
          note(found)
        },
        () => {
          following = false
        },
      )
    },
    followEvery: (ms) => {
      if (process.platform !== 'linux' || !hasChildLists()) return () => {}
      const timer = setInterval(() => {
        if (!serverRuns()) return
        const found = linuxDescendants(pid)
        if (found) renote(found)
      }, ms)
      // A server's bookkeeping must not keep the host running.
      timer.unref()
      return () => clearInterval(timer)
    },
    alive: () => {
      if (serverRuns()) return true
      if (!checkedAfterExit) {
        checkedAfterExit = true
        forgetOthers()
      }
      for (const descendant of known.keys()) if (!isRunning(descendant)) known.delete(descendant)
      return known.size > 0
    },
    signal: (name) => {
      survey()
      if (serverRuns()) child.kill(name)
      forgetOthers()
      for (const descendant of known.keys()) kill(descendant, name)
    },
  }
}

/** `root`'s descendants, children first; none where the process table cannot be read. */
function descendantsOf(root: number): ProcessEntry[] {
  return descendantsIn(processTable(), root)
}

/** `root`'s descendants as `ps` shows them, read without blocking. */
async function descendantsLater(root: number): Promise<ProcessEntry[]> {
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      'ps',
      ['-A', '-o', 'pid=,ppid=,lstart='],
      { encoding: 'utf8', timeout: 2_000 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    ),
  )
  return descendantsIn(psEntries(out), root)
}

/**
 * `root`'s descendants on Linux, from each process's `/proc/<pid>/task/<tid>/children`: reads
 * only the tree's own entries. `undefined` where the kernel does not offer those lists.
 */
function linuxDescendants(root: number): ProcessEntry[] | undefined {
  if (!hasChildLists()) return undefined
  const found: ProcessEntry[] = []
  const seen = new Set<number>([root])
  for (let i = -1; i < found.length; i++) {
    const parent = i === -1 ? root : found[i]!.pid
    let tasks: string[]
    try {
      tasks = readdirSync(`/proc/${parent}/task`)
    } catch {
      continue // Exited meanwhile.
    }
    for (const task of tasks) {
      let list: string
      try {
        list = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8')
      } catch {
        continue // The thread or the process ended meanwhile.
      }
      for (const word of list.split(' ')) {
        const pid = Number(word)
        if (word === '' || !Number.isInteger(pid) || seen.has(pid)) continue
        seen.add(pid)
        const fields = statFields(pid)
        if (fields) found.push({ pid, parent, identity: linuxIdentity(fields) })
      }
    }
  }
  return found
}

/** Whether the kernel lists each thread's children (`/proc/<pid>/task/<tid>/children`). */
function hasChildLists(): boolean {
  return existsSync(`/proc/${process.pid}/task/${process.pid}/children`)
}

/** `root`'s descendants in `table`, children first. */
function descendantsIn(table: readonly ProcessEntry[], root: number): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>()
  for (const entry of table) {
    const list = children.get(entry.parent)
    if (list) list.push(entry)
    else children.set(entry.parent, [entry])
  }
  const found: ProcessEntry[] = []
  for (let i = -1; i < found.length; i++) {
    for (const child of children.get(i === -1 ? root : found[i]!.pid) ?? []) found.push(child)
  }
  return found
}

/** Every process: `/proc` on Linux, `ps` on other POSIX systems. */
function processTable(): ProcessEntry[] {
  switch (process.platform) {
    case 'win32':
      return []
    case 'linux':
      return linuxTable()
    default:
      return psTable()
  }
}

function linuxTable(): ProcessEntry[] {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return psTable()
  }
  const table: ProcessEntry[] = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    const fields = statFields(entry)
    if (fields) table.push({ pid: Number(entry), parent: Number(fields[1]), identity: linuxIdentity(fields) })
  }
  return table
}

/** `ps` with each process's start time (`lstart`, to the second); without it where `ps` lacks it. */
function psTable(): ProcessEntry[] {
  const table = psRows(['pid=', 'ppid=', 'lstart='])
  if (table.length > 0) return table
  return psRows(['pid=', 'ppid='])
}

function psRows(columns: readonly string[]): ProcessEntry[] {
  let out: string
  try {
    out = execFileSync('ps', ['-A', '-o', columns.join(',')], { encoding: 'utf8', timeout: 2_000 })
  } catch {
    return []
  }
  return psEntries(out)
}

/** The rows `ps -o pid=,ppid=[,lstart=]` printed. */
function psEntries(out: string): ProcessEntry[] {
  const table: ProcessEntry[] = []
  for (const line of out.split('\n')) {
    const [pid, parent, ...start] = line.trim().split(/\s+/)
    const entry = { pid: Number(pid), parent: Number(parent), identity: start.join(' ') || undefined }
    if (Number.isInteger(entry.pid) && Number.isInteger(entry.parent)) table.push(entry)
  }
  return table
}

/** What tells each of `pids` from a later process given the same pid, read now; gone ones are missing. */
function identitiesOf(pids: readonly number[]): Map<number, string | undefined> {
  const identities = new Map<number, string | undefined>()
  if (pids.length === 0) return identities
  if (process.platform === 'linux') {
    for (const pid of pids) {
      const fields = statFields(pid)
      if (fields) identities.set(pid, linuxIdentity(fields))
    }
    return identities
  }
  const wanted = new Set(pids)
  for (const entry of psRows(['pid=', 'ppid=', 'lstart='])) {
    if (wanted.has(entry.pid)) identities.set(entry.pid, entry.identity)
  }
  return identities
}

/**
 * The start time (clock ticks after boot) and session of a process from `statFields`: a process
 * that detached since it was noted (a new session, as a daemon makes) is not the one noted.
 */
function linuxIdentity(fields: readonly string[]): string | undefined {
  const [session, start] = [fields[3], fields[19]]
  return session !== undefined && start !== undefined ? `${start}/${session}` : undefined
}

/** `state ppid pgrp ...` of `/proc/<pid>/stat`, after the name (which may hold spaces and parentheses). */
function statFields(pid: string | number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined // Exited meanwhile.
  }
}

/**
 * Whether `pid` runs. A zombie has exited: an orphan is left to the system's init to reap, and
 * where none reaps (a container whose first process is not an init) it stays one for good, still
 * answering signal 0.
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  if (process.platform !== 'linux') return true
  const state = statFields(pid)?.[0]
  return state !== undefined && state !== 'Z' && state !== 'X'
}

function kill(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {
    // Already gone.
  }
}

/**
 * Resolves once `tree` is gone, signalling it SIGTERM at the time `termAt()` says (it may come
 * earlier while waiting), then SIGKILL `TERM_GRACE_MS` later. Resolves `false` if it outlives
 * even SIGKILL for `KILL_WAIT_MS`.
 */
export async function reapTree(tree: ProcessTree, termAt: () => number): Promise<boolean> {
  let termed = Number.POSITIVE_INFINITY
  let killed = Number.POSITIVE_INFINITY
  while (tree.alive()) {
    const now = Date.now()
    if (now >= killed + KILL_WAIT_MS) return false
    if (killed === Number.POSITIVE_INFINITY && now >= termed + TERM_GRACE_MS) {
      tree.signal('SIGKILL')
      killed = now
    } else if (termed === Number.POSITIVE_INFINITY && now >= termAt()) {
      tree.signal('SIGTERM')
      termed = now
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
  return true
}

/**
 * Sends the tree SIGTERM if the host process exits while it runs (`process.exit()`, or an empty
 * event loop) without closing the connection: the server would only see its stdin close, and
 * what it started nothing at all. Returns the function that stops watching. Raises the host's
 * listener limit by one for as long, so that many servers do not set off Node's leak warning.
 */
export function stopOnHostExit(tree: ProcessTree): () => void {
  const onExit = () => tree.signal('SIGTERM')
  const limit = process.getMaxListeners()
  if (limit !== 0) process.setMaxListeners(limit + 1)
  process.on('exit', onExit)
  let watching = true
  return () => {
    if (!watching) return
    watching = false
    process.off('exit', onExit)
    const now = process.getMaxListeners()
    if (limit !== 0 && now > 1) process.setMaxListeners(now - 1)
  }
}
