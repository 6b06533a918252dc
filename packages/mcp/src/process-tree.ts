import type { ChildProcess } from 'node:child_process'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

/** After SIGTERM, how long the tree has before SIGKILL. */
const TERM_GRACE_MS = 2_000
/** After SIGKILL, how long to wait for the tree to go before giving up (a process stuck in the kernel). */
const KILL_WAIT_MS = 5_000
const POLL_MS = 10

/**
 * A server and the processes it started (a browser, a language server, the real server behind an
 * `npx` wrapper): what stopping the server stops. They are found by walking the process table from
 * the server down, so they must be found while the server runs: once it exits, they are another
 * process's children. The server stays in the host's process group, so a terminal's Ctrl-C still
 * reaches the whole tree as it reaches the host. On Windows only the server is known.
 */
export interface ProcessTree {
  /** Notes the server's descendants now (before stopping it, while they are still its own). */
  survey(): void
  /** Whether the server or a descendant noted is still running. */
  alive(): boolean
  /** Signals the server and the descendants noted (surveying first while the server runs). */
  signal(name: NodeJS.Signals): void
}

/** The tree of `child`, running as `pid`. */
export function processTree(child: ChildProcess, pid: number): ProcessTree {
  // Signalled a few seconds at most after they were seen: a pid is not reused that fast.
  const known = new Set<number>()
  const serverRuns = () => child.exitCode === null && child.signalCode === null
  const survey = () => {
    if (!serverRuns()) return
    for (const descendant of descendantsOf(pid)) known.add(descendant)
  }
  return {
    survey,
    alive: () => {
      if (serverRuns()) return true
      for (const descendant of known) if (!isRunning(descendant)) known.delete(descendant)
      return known.size > 0
    },
    signal: (name) => {
      survey()
      if (serverRuns()) child.kill(name)
      for (const descendant of known) kill(descendant, name)
    },
  }
}

/** The pids of `root`'s descendants, children first; none where the process table cannot be read. */
function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>()
  for (const [pid, parent] of processTable()) {
    const list = children.get(parent)
    if (list) list.push(pid)
    else children.set(parent, [pid])
  }
  const found: number[] = []
  for (let i = -1; i < found.length; i++) {
    for (const child of children.get(i === -1 ? root : found[i]!) ?? []) found.push(child)
  }
  return found
}

/** Every process's pid and parent pid: `/proc` on Linux, `ps` on other POSIX systems. */
function processTable(): [pid: number, parent: number][] {
  switch (process.platform) {
    case 'win32':
      return []
    case 'linux':
      return linuxTable()
    default:
      return psTable()
  }
}

function linuxTable(): [number, number][] {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return psTable()
  }
  const table: [number, number][] = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    const fields = statFields(entry)
    if (fields) table.push([Number(entry), Number(fields[1])])
  }
  return table
}

function psTable(): [number, number][] {
  let out: string
  try {
    out = execFileSync('ps', ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8', timeout: 2_000 })
  } catch {
    return []
  }
  const table: [number, number][] = []
  for (const line of out.split('\n')) {
    const [pid, parent] = line.trim().split(/\s+/).map(Number)
    if (Number.isInteger(pid) && Number.isInteger(parent)) table.push([pid!, parent!])
  }
  return table
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
