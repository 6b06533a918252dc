import type { Stats } from 'node:fs'
import { constants } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { openChecked } from './confined-open.js'
import type { Workspace } from './workspace.js'

// Non-blocking: opening a FIFO for reading would otherwise wait for a writer, and hang the agent.
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK

/**
 * Opens `file` (an absolute path the workspace has judged) for reading when it is a regular
 * file. A directory, a FIFO, a socket or a device is refused at once: reading one could wait
 * forever or never end. A symlink put there since, or a directory on the way moved or swapped
 * since, is refused too (see `openChecked`). `via` opens it through its directory's handle
 * (`OpenDirectory.entry`).
 */
export async function openRegularFile(
  workspace: Workspace,
  file: string,
  options: { via?: string } = {},
): Promise<{ handle: FileHandle; stat: Stats }> {
  const handle = await openChecked(workspace, file, FLAGS, options)
  try {
    const stat = await handle.stat()
    if (stat.isDirectory()) throw new Error('is a directory: use list_dir')
    if (!stat.isFile()) throw new Error('not a regular file (a FIFO, a socket or a device)')
    return { handle, stat }
  } catch (error) {
    await handle.close()
    throw error
  }
}
