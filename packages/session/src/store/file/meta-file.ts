import { readFile, rename, writeFile } from 'node:fs/promises'
import { type Static, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { SessionError } from '../../errors.js'
import { SessionInfo } from '../../session-info.js'

/** The metadata file's format version. */
export const META_FORMAT_VERSION = 1

/**
 * What `session.json` holds: the session's info, plus how many bytes of the history file it
 * accounts for, so a reader can count records appended after the last metadata write.
 */
export const SessionMeta = Type.Object(
  {
    v: Type.Integer({ minimum: 1 }),
    ...SessionInfo.properties,
    byteLength: Type.Integer({ minimum: 0 }),
  },
  { $id: 'SessionMeta' },
)
export type SessionMeta = Static<typeof SessionMeta>

/** Reads and validates a metadata file; `undefined` when it does not exist. */
export async function readMetaFile(file: string, sessionId: string): Promise<SessionMeta | undefined> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
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

/** Replaces a metadata file atomically: readers see the old file or the new one, never a mix. */
export async function writeMetaFile(file: string, temp: string, meta: SessionMeta): Promise<void> {
  await writeFile(temp, `${JSON.stringify(meta, null, 2)}\n`)
  await rename(temp, file)
}

/** Splits a metadata record into the public info and the byte count it accounts for. */
export function infoOf(meta: SessionMeta): { info: SessionInfo; byteLength: number } {
  const { v: _v, byteLength, ...info } = meta
  return { info, byteLength }
}

/** The metadata record for `info` accounting for `byteLength` bytes of history. */
export function metaOf(info: SessionInfo, byteLength: number): SessionMeta {
  return { v: META_FORMAT_VERSION, ...info, byteLength }
}
