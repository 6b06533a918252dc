import { constants } from 'node:fs'
import { type FileHandle, lstat, open } from 'node:fs/promises'
import { SessionError } from '../../errors.js'

// Where the platform has no O_NOFOLLOW (Windows), the lstat checks below still refuse links.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0

/** Flags for reading a session file without following a link in its place. */
export const READ = constants.O_RDONLY | NOFOLLOW
/** Flags for appending to (and reading) a history file, created when missing, never through a link. */
export const APPEND = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | NOFOLLOW
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
 * Opens a session file without following a link in its place. `ENOENT` passes through as the
 * platform's error; a link is `symlink_refused`.
 */
export async function openNoFollow(path: string, flags: number, sessionId: string): Promise<FileHandle> {
  if (NOFOLLOW === 0) await assertNotLink(path, sessionId)
  try {
    return await open(path, flags, 0o644)
  } catch (error) {
    // Linux and macOS say ELOOP for a link opened with O_NOFOLLOW; FreeBSD says EMLINK.
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP' || code === 'EMLINK') throw symlinkRefused(path, sessionId, error)
    throw error
  }
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
