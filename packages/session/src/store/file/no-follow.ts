import { constants, type Stats } from 'node:fs'
import { type FileHandle, lstat, open } from 'node:fs/promises'
import { SessionError } from '../../errors.js'

// Where the platform has no O_NOFOLLOW (Windows), the lstat checks below still refuse links.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0
// Opening a FIFO for reading waits for a writer, for ever, on one of libuv's few I/O threads; with
// O_NONBLOCK it returns at once, and the file's type is checked before anything is read. Regular
// files ignore the flag.
const NONBLOCK = constants.O_NONBLOCK ?? 0

/** Flags for reading a session file without following a link in its place, or waiting on a FIFO. */
export const READ = constants.O_RDONLY | NOFOLLOW | NONBLOCK
/** Flags for appending to (and reading) a history file, created when missing, never through a link. */
export const APPEND = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | NOFOLLOW | NONBLOCK
/** Flags for a new file that must not exist yet (a link in its place counts as existing). */
export const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW

/**
 * The refusal to read or write through a symbolic link inside the store: a link planted in a
 * session directory (or as one) would make the store truncate, append to or read a file outside it.
 */
export function symlinkRefused(path: string, sessionId: string, cause?: unknown): SessionError {
  return new SessionError(
    'symlink_refused',
    `${path} is a symbolic link; the session store does not read or write through links in a session ` +
      'directory (it could reach a file outside the store). Replace the link with the real file or ' +
      'directory, or point the store at the real location.',
    { sessionId, cause },
  )
}

/**
 * The refusal to use what is not a regular file (a FIFO, socket, device or directory) as a session
 * file: reading a FIFO would wait for a writer for ever, and none of them holds a session's data.
 */
export function notRegularFile(path: string, sessionId: string, cause?: unknown): SessionError {
  return new SessionError(
    'not_a_regular_file',
    `${path} is not a regular file (a FIFO, socket, device or directory is in its place); the session ` +
      'store reads and writes only regular files. Remove it, or restore the session from a backup.',
    { sessionId, cause },
  )
}

/**
 * The refusal to write a session file that has other names (a hard link): appending to it, or
 * cutting a torn tail off it, would change the file under every name, in a backup made with
 * `cp -al` or outside the store.
 */
export function hardLinkRefused(path: string, sessionId: string, links: number): SessionError {
  return new SessionError(
    'hard_link_refused',
    `${path} has ${links} names (hard links); the session store does not write a file that has others, ` +
      'since the change would reach them too. Replace it with a copy of its own (cp, not cp -l).',
    { sessionId },
  )
}

/**
 * Opens a session file without following a link in its place. `ENOENT` passes through as the
 * platform's error; a link is `symlink_refused`, anything but a regular file `not_a_regular_file`,
 * and a file with other names opened for writing `hard_link_refused`.
 */
export async function openNoFollow(path: string, flags: number, sessionId: string): Promise<FileHandle> {
  if (NOFOLLOW === 0) await assertNotLink(path, sessionId)
  let handle: FileHandle
  try {
    handle = await open(path, flags, 0o644)
  } catch (error) {
    // Linux and macOS say ELOOP for a link opened with O_NOFOLLOW; FreeBSD says EMLINK.
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP' || code === 'EMLINK') throw symlinkRefused(path, sessionId, error)
    // A directory opened for writing; a socket (or a FIFO opened to write with no reader).
    if (code === 'EISDIR' || code === 'ENXIO') throw notRegularFile(path, sessionId, error)
    throw error
  }
  let stats: Stats
  try {
    stats = await handle.stat()
  } catch (error) {
    await handle.close()
    throw error
  }
  const writes = (flags & (constants.O_WRONLY | constants.O_RDWR)) !== 0
  if (stats.isFile() && !(writes && stats.nlink > 1)) return handle
  await handle.close()
  throw stats.isFile() ? hardLinkRefused(path, sessionId, stats.nlink) : notRegularFile(path, sessionId)
}

/**
 * Refuses a session directory that is a symbolic link. A missing one is fine (callers handle
 * `ENOENT` as "no such session"). Only the session directory and the files in it are checked: the
 * store's own directory may be a link the user made on purpose.
 */
export async function assertNotLink(path: string, sessionId: string): Promise<void> {
  if (await isLink(path)) throw symlinkRefused(path, sessionId)
}

async function isLink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}
