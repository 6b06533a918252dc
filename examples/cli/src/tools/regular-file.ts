import type { Stats } from 'node:fs'
import { constants } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'

// Non-blocking: opening a FIFO for reading would otherwise wait for a writer, and hang the agent.
// No-follow: the path is one the workspace resolved; a symlink put there since is refused.
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0)

/**
 * Opens `file` (an absolute path the workspace has judged) for reading when it is a regular
 * file. A directory, a FIFO, a socket or a device is refused at once: reading one could wait
 * forever or never end.
 */
export async function openRegularFile(file: string): Promise<{ handle: FileHandle; stat: Stats }> {
  const handle = await open(file, FLAGS)
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
