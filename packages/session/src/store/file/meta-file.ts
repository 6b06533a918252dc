import { lstat, rename, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { type Static, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { SessionError } from '../../errors.js'
import { SessionInfo } from '../../session-info.js'
import { HISTORY_FILE } from './layout.js'
import { CREATE_NEW, notRegularFile, openNoFollow, READ } from './no-follow.js'
import { syncDirectory } from './sync-directory.js'

/** The metadata file's format version. */
export const META_FORMAT_VERSION = 1

/**
 * What `session.json` holds: the session's info, plus how many bytes of the history file it
 * accounts for, so a reader can count records appended after the last metadata write. With
 * `committedLength`, the history's records end at that byte: a failed append that could not be
 * cut off left the bytes past it (readers ignore them, the next writer truncates them).
 */
export const SessionMeta = Type.Object(
  {
    v: Type.Integer({ minimum: 1 }),
    ...SessionInfo.properties,
    byteLength: Type.Integer({ minimum: 0 }),
    committedLength: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { $id: 'SessionMeta' },
)
export type SessionMeta = Static<typeof SessionMeta>

/** Reads and validates a metadata file; `undefined` when it (or its session directory) does not exist. */
export async function readMetaFile(file: string, sessionId: string): Promise<SessionMeta | undefined> {
  let text: string
  try {
    const handle = await openNoFollow(file, READ, sessionId)
    try {
      text = await handle.readFile('utf8')
    } finally {
      await handle.close()
    }
  } catch (error) {
    // ENOTDIR: a file, not a directory, has the session's name, which `list()` skips too.
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOTDIR') return undefined
    if (code !== 'ENOENT') throw error
    // A create cut short leaves no metadata and no records: no session yet, and the next create
    // takes its directory over. Records without metadata are a session whose metadata was lost,
    // which must neither vanish from `list()` nor become a new session's history.
    const history = join(dirname(file), HISTORY_FILE)
    if (!(await holdsBytes(history))) return undefined
    throw new SessionError(
      'corrupt_metadata',
      `${file}: missing, though ${history} holds records (the session's metadata was lost). ` +
        'Restore it from a backup, or move the history away and delete the session.',
      { sessionId, cause: error },
    )
  }
  const corrupt = (detail: string, cause?: unknown) =>
    new SessionError('corrupt_metadata', `${file}: ${detail}`, { sessionId, cause })
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw corrupt(`not JSON (${(cause as Error).message})`, cause)
  }
  const v = (value as { v?: unknown } | null)?.v
  if (typeof v === 'number' && v > META_FORMAT_VERSION) {
    throw corrupt(`format version ${v} was written by a newer Kode; upgrade to read it`)
  }
  if (!Value.Check(SessionMeta, value)) {
    const first = Value.Errors(SessionMeta, value).First()
    throw corrupt(`at ${first?.path || '/'}: ${first?.message ?? 'invalid'}`)
  }
  if (value.id !== sessionId) throw corrupt(`holds session ${JSON.stringify(value.id)}, not ${sessionId}`)
  return value
}

/**
 * Replaces a metadata file atomically: readers see the old file or the new one, never a mix. The
 * temp file is created anew (never written through a link left in its place) and removed when the
 * write fails (a full disk), so no `session.json.tmp` is left behind. With `sync`, its content is
 * on disk before it is renamed into place, and the rename is on disk (the directory synced) before
 * this resolves.
 */
export async function writeMetaFile(
  file: string,
  temp: string,
  meta: SessionMeta,
  sessionId: string,
  sync: boolean,
): Promise<void> {
  await removeTemp(temp, sessionId)
  try {
    const handle = await openNoFollow(temp, CREATE_NEW, sessionId)
    try {
      await handle.writeFile(`${JSON.stringify(meta, null, 2)}\n`)
      // Renamed unsynced, the file can come back empty after a power loss: the session unreadable.
      if (sync) await handle.datasync()
    } finally {
      await handle.close()
    }
    try {
      await rename(temp, file)
    } catch (error) {
      // A directory put where the metadata belongs: the rename cannot replace it (nor should it).
      if ((error as NodeJS.ErrnoException).code === 'EISDIR') throw notRegularFile(file, sessionId, error)
      throw error
    }
    // Until the directory is synced, a power loss can undo the rename: the old metadata comes back.
    if (sync) await syncDirectory(dirname(file))
  } catch (error) {
    await removeTemp(temp, sessionId).catch(() => {})
    throw error
  }
}

/**
 * Removes a temp file left by an earlier write (or a crash); a link, FIFO or socket in its place
 * goes too (the name is the store's own, and unlinking one touches nothing behind it). A directory
 * there is refused with `not_a_regular_file`, not removed: it may hold someone's files.
 */
export async function removeTemp(temp: string, sessionId: string): Promise<void> {
  try {
    await unlink(temp)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return
    // Linux says EISDIR for a directory, macOS EPERM (which may also be a permission).
    if ((code === 'EISDIR' || code === 'EPERM') && (await isDirectory(temp))) {
      throw tempInTheWay(temp, sessionId, error)
    }
    throw error
  }
}

/** Whether `path` is a regular file holding anything (not followed if it is a link). */
async function holdsBytes(path: string): Promise<boolean> {
  const stats = await lstat(path).catch(() => undefined)
  return stats?.isFile() === true && stats.size > 0
}

async function isDirectory(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined))?.isDirectory() ?? false
}

/** The refusal to write metadata while a directory sits where its temp file goes. */
function tempInTheWay(temp: string, sessionId: string, cause: unknown): SessionError {
  return new SessionError(
    'not_a_regular_file',
    `${temp} is a directory, where the session store writes the temp file of the session's ` +
      'metadata; it is left as it is (it may hold files of yours), and the session is not written ' +
      'until it is gone. Move or remove it, then retry; the session itself is unchanged.',
    { sessionId, cause },
  )
}

/**
 * Splits a metadata record into the public info, the byte count it accounts for, and where the
 * history's records end when a failed append left bytes past them.
 */
export function infoOf(meta: SessionMeta): {
  info: SessionInfo
  byteLength: number
  committedLength: number | undefined
} {
  const { v: _v, byteLength, committedLength, ...info } = meta
  return { info, byteLength, committedLength }
}

/**
 * The metadata record for `info` accounting for `byteLength` bytes of history; `committed`: the
 * history's records end there (bytes past it are a failed append's).
 */
export function metaOf(info: SessionInfo, byteLength: number, committed?: boolean): SessionMeta {
  const meta: SessionMeta = { v: META_FORMAT_VERSION, ...info, byteLength }
  if (committed) meta.committedLength = byteLength
  return meta
}
