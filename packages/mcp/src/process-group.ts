import type { ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

/**
 * Whether a server is started as the leader of its own process group (`detached` on POSIX), so
 * that what it starts (a browser, a language server, the real server behind an `npx` wrapper) can
 * be signalled with it. Windows has no such groups to signal: there the server alone is signalled,
 * as the SDK does, and a process it started may outlive it.
 */
export const OWN_GROUP = process.platform !== 'win32'

/** After SIGTERM, how long the tree has before SIGKILL. */
const TERM_GRACE_MS = 2_000
/** After SIGKILL, how long to wait for the tree to go before giving up (a process stuck in the kernel). */
const KILL_WAIT_MS = 5_000
const POLL_MS = 10

/** A server and, on POSIX, every process of its group: what stopping the server stops. */
export interface ProcessTree {
  /** Whether any of its processes is left. */
  alive(): boolean
  /** Signals its processes; nothing if they are gone. */
  signal(name: NodeJS.Signals): void
}

/** The tree of `child`, spawned with `detached: OWN_GROUP` and running as `pid`. */
export function processTree(child: ChildProcess, pid: number): ProcessTree {
  if (!OWN_GROUP) {
    return {
      alive: () => child.exitCode === null && child.signalCode === null,
      signal: (name) => {
        child.kill(name)
      },
    }
  }
  // The member last found alive, checked first: scanning every process is the slow way.
  let member: string | undefined
  return {
    alive: () => {
      if (child.exitCode === null && child.signalCode === null) return true
      // Signal 0 to the group reaches any member, even once the leader is gone (`-pid` stays the
      // group's id, and is not given to a new process, while one member is left).
      try {
        process.kill(-pid, 0)
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'EPERM'
      }
      if (process.platform !== 'linux') return true
      if (member !== undefined && isLiveMember(member, pid)) return true
      const found = liveMember(pid)
      if (found === null) return true
      member = found
      return found !== undefined
    },
    signal: (name) => {
      try {
        process.kill(-pid, name)
      } catch {
        // Already gone.
      }
    },
  }
}

/**
 * A member of group `group` that is not a zombie, if any; `null` if processes cannot be listed. A helper that outlived the server is
 * left to the system's init to reap; where none reaps (a container whose first process is not an
 * init), it stays a zombie for good: it has exited, but still answers signal 0.
 */
function liveMember(group: number): string | undefined | null {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return null
  }
  return entries.find((entry) => /^\d+$/.test(entry) && isLiveMember(entry, group))
}

function isLiveMember(pid: string, group: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return false // Exited meanwhile.
  }
  // `pid (name) state ppid pgrp ...`; the name may hold spaces and parentheses.
  const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(pgrp) === group && state !== 'Z' && state !== 'X'
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
 * event loop), as it no longer shares the host's process group, which a terminal signals as a
 * whole. Returns the function that stops watching. Raises the host's listener limit by one for as
 * long, so that many servers do not set off Node's leak warning.
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
