import { readFile, readlink } from 'node:fs/promises'

/**
 * When a process started, as Linux's `/proc` tells it: field 22 of `/proc/<pid>/stat` (clock ticks
 * since boot), with the namespaces that reading depends on. A pid names one process at a time, and
 * a process that later gets the same pid started later, so the two together tell a lock's owner
 * from a process that reused its pid.
 */
export interface ProcStart {
  /** Field 22 of the process's `stat`, as written there. */
  ticks: string
  /**
   * The pid and time namespaces the reading was made in (`/proc/self/ns/pid` and `.../time`, as
   * `pid:[…] time:[…]`): a pid means another process in another pid namespace, and a time
   * namespace shifts the start it shows. Two readings compare only when these are the same.
   */
  namespaces: string
}

/**
 * This process's start, or `undefined` off Linux, where `/proc` cannot be read, or where it is not
 * this process's pid namespace's (a container that kept its host's `/proc`: pids there are not
 * the ones this process and its locks use).
 */
export async function readOwnProcStart(): Promise<ProcStart | undefined> {
  if (process.platform !== 'linux') return undefined
  try {
    if ((await readlink('/proc/self')) !== String(process.pid)) return undefined
    const [ticks, pidNamespace, timeNamespace] = await Promise.all([
      readProcStartTicks(process.pid),
      readlink('/proc/self/ns/pid'),
      // Kernels before 5.6 have no time namespaces.
      readlink('/proc/self/ns/time').catch(() => ''),
    ])
    return ticks === undefined ? undefined : { ticks, namespaces: `${pidNamespace} ${timeNamespace}` }
  } catch {
    return undefined
  }
}

/** Field 22 of `/proc/<pid>/stat`; `undefined` when there is no such process or it cannot be read. */
export async function readProcStartTicks(pid: number): Promise<string | undefined> {
  let stat: string
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // Field 2, the command name, is in parentheses and may hold spaces and parentheses itself: the
  // fields after it start past the last `)`, with field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = fields[22 - 3]
  return ticks !== undefined && /^\d+$/.test(ticks) ? ticks : undefined
}
