import {
  assertSessionInit,
  type CreateSessionInit,
  SessionError,
  type SessionInfo,
  type SessionPatch,
} from '@kode/session'
import { fromMetaColumn, toMetaColumn } from './meta-column.js'

/** A row of the `sessions` table as `pg` returns it (bigint columns arrive as strings). */
export interface SessionRow {
  id: string
  /** As stored: strings jsonb cannot hold are wrapped (see `meta-column.ts`). */
  meta: unknown
  created_at: string
  updated_at: string
  record_count: number
}

/** The metadata fields kept in the `meta` column. */
type Meta = Pick<SessionInfo, 'title' | 'parentSessionId' | 'forkedFrom' | 'subAgent' | 'model' | 'provider'>

const META_KEYS = ['title', 'parentSessionId', 'forkedFrom', 'subAgent', 'model', 'provider'] as const

/** The `meta` column of a new session: only the fields given (never `undefined`). */
export function metaOf(init: CreateSessionInit | SessionPatch): Meta {
  const meta: Record<string, unknown> = {}
  for (const key of META_KEYS) {
    const value = (init as Record<string, unknown>)[key]
    if (value !== undefined) meta[key] = value
  }
  return meta as Meta
}

/** The `meta` parameter of a create: the fields given, as the column stores them. */
export function metaParam(init: CreateSessionInit): string {
  // As JSON has it first (what the file store writes): a link's own fields may hold any value.
  return JSON.stringify(toMetaColumn(JSON.parse(JSON.stringify(metaOf(init)))))
}

/**
 * The `meta` parameter of an update: only the fields a patch may change (`patchSessionInfo`'s),
 * whatever else a caller outside TypeScript put in it, since `meta || patch` would take them all.
 */
export function patchParam(patch: SessionPatch): string {
  const { title, model, provider } = patch
  return JSON.stringify(toMetaColumn(metaOf({ title, model, provider })))
}

/**
 * A fresh `SessionInfo` from a row; the caller owns it. Throws `corrupt_metadata` when the `meta`
 * column does not hold metadata of a session's shape (jsonb holds any JSON: `null`, an array, a
 * title that is not a string, put there by hand or by a tool outside Kode).
 */
export function infoOf(row: SessionRow): SessionInfo {
  return {
    id: row.id,
    ...metaOf(storedMeta(row)),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    recordCount: row.record_count,
  }
}

/** The row's metadata, checked as `create` checks what it is given. */
function storedMeta(row: SessionRow): Meta {
  let meta: unknown
  try {
    meta = fromMetaColumn(row.meta)
    // Its check refuses a value that is not an object too.
    assertSessionInit(meta as CreateSessionInit, row.id)
  } catch (cause) {
    // The check's message names the `create` it was made for; the path and the fault are what matter.
    const detail = cause instanceof Error ? cause.message.replace(/^create of [^:]*: /, '') : String(cause)
    throw new SessionError(
      'corrupt_metadata',
      `session ${row.id}: its meta column does not hold a session's metadata (${detail})`,
      { sessionId: row.id, cause },
    )
  }
  return meta as Meta
}
