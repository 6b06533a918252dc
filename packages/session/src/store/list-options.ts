import { SessionError } from '../errors.js'
import { type SessionInfo, sortNewestFirst } from '../session-info.js'

/** Options of `SessionStore.list`. */
export interface ListSessionsOptions {
  /**
   * Only the sessions whose `parentSessionId` is this: a session's sub-agent sessions and the forks
   * made from it.
   */
  parentSessionId?: string | undefined
  /** The most sessions one call returns: a positive integer. Default: all of them. */
  limit?: number | undefined
  /**
   * The last session of the previous page: the call returns the sessions that come after it in the
   * list's order. Only its `updatedAt`, `createdAt` and `id` are read.
   */
  after?: Pick<SessionInfo, 'updatedAt' | 'createdAt' | 'id'> | undefined
}

/** `ListSessionsOptions` once checked: every field present is of its type. */
export interface ListSessionsQuery {
  parentSessionId: string | undefined
  limit: number | undefined
  after: { updatedAt: number; createdAt: number; id: string } | undefined
}

/**
 * Checks `options` before a store does any I/O, and returns them with only the fields `list`
 * reads. Throws a `SessionError` (`invalid_list_options`) for a `limit` that is not a positive
 * integer, an `after` without finite `updatedAt` and `createdAt` and a string `id`, or a
 * `parentSessionId` that is not a string.
 */
export function checkListOptions(options: ListSessionsOptions | undefined): ListSessionsQuery {
  if (options === undefined) return { parentSessionId: undefined, limit: undefined, after: undefined }
  if (typeof options !== 'object' || options === null)
    refuse(`options must be an object, got ${shown(options)}`)
  const { parentSessionId, limit, after } = options
  if (parentSessionId !== undefined && typeof parentSessionId !== 'string')
    refuse(`parentSessionId must be a string, got ${shown(parentSessionId)}`)
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0))
    refuse(`limit must be a positive integer, got ${shown(limit)}`)
  if (after !== undefined) {
    if (typeof after !== 'object' || after === null)
      refuse(`after must be a session's info, got ${shown(after)}`)
    for (const field of ['updatedAt', 'createdAt'] as const)
      if (typeof after[field] !== 'number' || !Number.isFinite(after[field]))
        refuse(`after.${field} must be a finite number, got ${shown(after[field])}`)
    if (typeof after.id !== 'string') refuse(`after.id must be a string, got ${shown(after.id)}`)
  }
  return {
    parentSessionId,
    limit,
    after: after && { updatedAt: after.updatedAt, createdAt: after.createdAt, id: after.id },
  }
}

/**
 * What `list` returns for `query` from every session a store holds, for stores that read all
 * metadata anyway (the memory and file stores): the filtered sessions newest updated first, those
 * after `query.after`, at most `query.limit`. Sorts `infos` in place.
 */
export function pageSessions(infos: SessionInfo[], query: ListSessionsQuery): SessionInfo[] {
  const { parentSessionId, after, limit } = query
  const sorted = sortNewestFirst(
    parentSessionId === undefined ? infos : infos.filter((info) => info.parentSessionId === parentSessionId),
  )
  const start = after === undefined ? 0 : firstAfter(sorted, after)
  return sorted.slice(start, limit === undefined ? undefined : start + limit)
}

/** The index of the first session that comes after `after` in `sortNewestFirst`'s order. */
function firstAfter(sorted: readonly SessionInfo[], after: NonNullable<ListSessionsQuery['after']>): number {
  const index = sorted.findIndex(
    (info) =>
      info.updatedAt < after.updatedAt ||
      (info.updatedAt === after.updatedAt &&
        (info.createdAt < after.createdAt || (info.createdAt === after.createdAt && info.id > after.id))),
  )
  return index === -1 ? sorted.length : index
}

function refuse(message: string): never {
  throw new SessionError('invalid_list_options', `list: ${message}`)
}

function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value)
  return typeof value
}
