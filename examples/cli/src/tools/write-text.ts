import { randomBytes } from 'node:crypto'
import { lstat, open, rename, unlink } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import { openDirectory } from './confined-open.js'
import { type Workspace, WorkspaceError } from './workspace.js'

/**
 * Writes `text` to `file` (an absolute path the workspace has already judged) all at once: into a
 * new temporary file beside it, then renamed over it. A full disk or an interrupt leaves the old
 * file as it was, never half written. An existing file keeps its permission bits; missing parent
 * directories are created.
 *
 * The directory is opened once and checked to be where the workspace said (see `openDirectory`);
 * the temporary file and the rename go through that handle, so a directory swapped for a symlink
 * since the check cannot redirect the write. A file with more than one hard link is refused
 * (`hard_linked`): its other names may lie outside the workspace. (The rename would leave them
 * unchanged anyway, but it would split the file silently.)
 */
export async function writeTextAtomic(
  workspace: Workspace,
  file: string,
  text: string,
  signal?: AbortSignal,
): Promise<void> {
  const dir = await openDirectory(workspace, dirname(file), true)
  try {
    const name = basename(file)
    const target = dir.entry(name)
    const mode = await modeOf(workspace, file, target)
    // `wx`: a fresh file, never a link someone placed under the temporary name.
    const temp = dir.entry(`.${name}.kode-${randomBytes(6).toString('hex')}.tmp`)
    const handle = await open(temp, 'wx', mode)
    try {
      try {
        await handle.writeFile(text, { encoding: 'utf8', signal })
        await handle.sync()
      } finally {
        await handle.close()
      }
      signal?.throwIfAborted()
      await rename(temp, target)
    } catch (error) {
      await unlink(temp).catch(() => {})
      throw error
    }
  } finally {
    await dir.close()
  }
}

/** The permission bits `file` keeps, after checking it may be replaced; 0o666 for a new file. */
async function modeOf(workspace: Workspace, file: string, target: string): Promise<number> {
  const info = await lstat(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  if (info === undefined) return 0o666
  const shown = workspace.display(file)
  // The workspace resolved symlinks: one here now was put there since.
  if (info.isSymbolicLink())
    throw new WorkspaceError('changed', `${shown} changed while kode was using it (it is now a symlink)`)
  if (info.isDirectory()) throw new WorkspaceError('directory', `${shown} is a directory`)
  if (info.nlink > 1)
    throw new WorkspaceError(
      'hard_linked',
      `${shown} has ${info.nlink} hard links: its other names may lie outside the working directory, so kode does not change it. Ask the user to change it, or to make it a file of its own (cp ${shown} copy && mv copy ${shown})`,
    )
  return info.mode & 0o7777
}
