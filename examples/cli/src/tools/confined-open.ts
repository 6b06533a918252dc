import { constants } from 'node:fs'
import { type FileHandle, lstat, mkdir, open, readlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { type Workspace, WorkspaceError } from './workspace.js'

// The workspace judges a path, then a tool opens it: in between, another process may move a
// directory on it or swap one for a symlink to somewhere else. Node 20 has no openat() or
// RESOLVE_BENEATH, so on Linux the opened handle is asked where it really is
// (/proc/self/fd/<fd>), and what is done next inside a directory goes through that handle's
// /proc path, which leads to the opened directory itself whatever happens to its name since.
// Without /proc (macOS) only the last component is protected (O_NOFOLLOW).

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0
const DIRECTORY_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | NO_FOLLOW

/** A directory opened and checked to be where the workspace said it is. */
export interface OpenDirectory {
  /** The absolute path it was checked to be at. */
  readonly path: string
  /** The path of `name` in this very directory (through /proc on Linux, else by its path). */
  entry(name: string): string
  /** The directory itself, as {@link OpenDirectory.entry} reaches it. */
  readonly self: string
  close(): Promise<void>
}

/**
 * Opens `path` (an absolute path the workspace resolved, symlinks followed) without following a
 * symlink at its end, and checks that the handle is at `path`: a directory on the way moved or
 * swapped since the check is a {@link WorkspaceError} with code `changed`, and nothing was read.
 * `via` opens it by another name of the same place (a /proc path of its directory).
 */
export async function openChecked(
  workspace: Workspace,
  path: string,
  flags: number,
  options: { via?: string } = {},
): Promise<FileHandle> {
  const handle = await open(options.via ?? path, flags | NO_FOLLOW).catch(
    async (error: NodeJS.ErrnoException) => {
      // ELOOP: a symlink at the end; ENOTDIR for a directory: a symlink there, or a file now.
      const swapped =
        error.code === 'ELOOP' ||
        (error.code === 'ENOTDIR' &&
          (await lstat(options.via ?? path).catch(() => undefined))?.isSymbolicLink())
      throw swapped ? changed(workspace, path, error) : error
    },
  )
  const where = await whereIs(handle)
  if (where === undefined || where === path) return handle
  await handle.close()
  throw changed(workspace, path)
}

/**
 * Opens the directory `dir` (absolute, resolved by the workspace) as {@link openChecked} does.
 * With `create`, missing directories are made one at a time, each inside the one opened before it,
 * so none is made through a symlink swapped in since the check.
 */
export async function openDirectory(
  workspace: Workspace,
  dir: string,
  create = false,
): Promise<OpenDirectory> {
  return opened(workspace, dir).catch((error: NodeJS.ErrnoException) => {
    if (!create || error.code !== 'ENOENT' || dir === workspace.root) throw error
    return created(workspace, dir)
  })
}

/**
 * Opens the directory `name` of `parent` through the parent's handle, checked as
 * {@link openDirectory} does: a walk that goes down this way stays in the directories it opened,
 * and a directory on it swapped for a symlink since it was listed is a `changed` error.
 */
export async function openSubdirectory(
  workspace: Workspace,
  parent: OpenDirectory,
  name: string,
): Promise<OpenDirectory> {
  return opened(workspace, join(parent.path, name), parent.entry(name))
}

/** Makes the missing directory `dir` inside its parent, opened (and made) first. */
async function created(workspace: Workspace, dir: string): Promise<OpenDirectory> {
  const parent = await openDirectory(workspace, dirname(dir), true)
  try {
    // Made and opened through the parent's handle: the name it has now cannot lead elsewhere.
    const via = parent.entry(basename(dir))
    await mkdir(via).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error
    })
    return await opened(workspace, dir, via)
  } finally {
    await parent.close()
  }
}

async function opened(workspace: Workspace, dir: string, via?: string): Promise<OpenDirectory> {
  const handle = await openChecked(workspace, dir, DIRECTORY_FLAGS, { via }).catch(
    (error: NodeJS.ErrnoException) => {
      // Windows cannot open a directory as a file: there it is used by its path.
      if (error.code === 'EISDIR') return undefined
      throw error
    },
  )
  if (handle === undefined)
    return { path: dir, self: dir, entry: (name) => join(dir, name), close: async () => {} }
  const self = (await whereIs(handle)) === undefined ? dir : procPath(handle)
  return { path: dir, self, entry: (name) => join(self, name), close: () => handle.close() }
}

/** Where `handle` really is now (Linux), or `undefined` where that cannot be asked. */
async function whereIs(handle: FileHandle): Promise<string | undefined> {
  return readlink(procPath(handle)).catch(() => undefined)
}

function procPath(handle: FileHandle): string {
  return `/proc/self/fd/${handle.fd}`
}

function changed(workspace: Workspace, path: string, cause?: unknown): WorkspaceError {
  return new WorkspaceError(
    'changed',
    `${workspace.display(path)} changed while kode was using it (a directory on its path was moved or replaced by a symlink); nothing was read or written there`,
    { cause },
  )
}
