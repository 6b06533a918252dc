import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { SessionError } from './errors.js'

/** Who spawned a sub-agent session: the sub-agent's name and the parent's tool call that ran it. */
export const SubAgentLink = Type.Object(
  {
    name: Type.String(),
    parentToolCallId: Type.Optional(Type.String()),
  },
  { $id: 'SubAgentLink' },
)
export type SubAgentLink = Static<typeof SubAgentLink>

/** Where a forked session came from: the source session and the last record copied from it. */
export const ForkOrigin = Type.Object(
  {
    sessionId: Type.String(),
    messageId: Type.String(),
  },
  { $id: 'ForkOrigin' },
)
export type ForkOrigin = Static<typeof ForkOrigin>

/** A session's metadata, as `SessionStore.info` and `list` return it. Times are epoch milliseconds. */
export const SessionInfo = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    title: Type.Optional(Type.String()),
    createdAt: Type.Number(),
    /** When a record was last appended (metadata updates do not move it). */
    updatedAt: Type.Number(),
    /** The sub-agent's parent session, or the session a fork was made from. */
    parentSessionId: Type.Optional(Type.String()),
    forkedFrom: Type.Optional(ForkOrigin),
    subAgent: Type.Optional(SubAgentLink),
    model: Type.Optional(Type.String()),
    provider: Type.Optional(Type.String()),
    /** How many history records the session holds. */
    recordCount: Type.Integer({ minimum: 0 }),
  },
  { $id: 'SessionInfo' },
)
export type SessionInfo = Static<typeof SessionInfo>

/** What `SessionStore.create` accepts; every field is optional. */
export interface CreateSessionInit {
  /** The new session's id; generated (a UUID by default) when absent. */
  id?: string | undefined
  title?: string | undefined
  parentSessionId?: string | undefined
  subAgent?: SubAgentLink | undefined
  forkedFrom?: ForkOrigin | undefined
  model?: string | undefined
  provider?: string | undefined
}

/** What `SessionStore.update` may change. A field set to `undefined` is left as it is. */
export interface SessionPatch {
  title?: string | undefined
  model?: string | undefined
  provider?: string | undefined
}

/** The clock and id source a store uses; injectable so tests are deterministic. */
export interface StoreClock {
  /** Epoch milliseconds; default `Date.now`. */
  now?: (() => number) | undefined
  /** A new session id; default `crypto.randomUUID()`. */
  createId?: (() => string) | undefined
}

// What `create` and `update` accept, checked at run time: a caller outside TypeScript (a host
// passing a request body on) could otherwise write metadata `SessionInfo` refuses to read back,
// leaving the whole session unreadable.
const CreateSessionInitSchema = Type.Object({
  title: Type.Optional(Type.String()),
  parentSessionId: Type.Optional(Type.String()),
  subAgent: Type.Optional(SubAgentLink),
  forkedFrom: Type.Optional(ForkOrigin),
  model: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
})
const SessionPatchSchema = Type.Object({
  title: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
})

/** Throws a `SessionError` (`invalid_metadata`) unless `init` has the shape `CreateSessionInit` says. */
export function assertSessionInit(init: CreateSessionInit, sessionId?: string): void {
  assertShape(CreateSessionInitSchema, init, 'create', sessionId)
}

/** Throws a `SessionError` (`invalid_metadata`) unless `patch` has the shape `SessionPatch` says. */
export function assertSessionPatch(patch: SessionPatch, sessionId?: string): void {
  assertShape(SessionPatchSchema, patch, 'update', sessionId)
}

function assertShape(schema: TSchema, value: unknown, call: string, sessionId: string | undefined): void {
  if (Value.Check(schema, value)) return
  const first = Value.Errors(schema, value).First()
  throw new SessionError(
    'invalid_metadata',
    `${call}${sessionId === undefined ? '' : ` of ${sessionId}`}: at ${first?.path || '/'}: ${first?.message ?? 'invalid'}`,
    sessionId === undefined ? {} : { sessionId },
  )
}

/**
 * Builds the metadata of a new, empty session. Absent fields stay absent (never `undefined`).
 * Throws `invalid_metadata` for an `init` of the wrong shape.
 */
export function newSessionInfo(id: string, init: CreateSessionInit, now: number): SessionInfo {
  assertSessionInit(init, id)
  const info: SessionInfo = { id, createdAt: now, updatedAt: now, recordCount: 0 }
  if (init.title !== undefined) info.title = init.title
  if (init.parentSessionId !== undefined) info.parentSessionId = init.parentSessionId
  if (init.forkedFrom !== undefined) info.forkedFrom = { ...init.forkedFrom }
  if (init.subAgent !== undefined) info.subAgent = { ...init.subAgent }
  if (init.model !== undefined) info.model = init.model
  if (init.provider !== undefined) info.provider = init.provider
  return info
}

/**
 * Returns `info` with `patch` applied. `updatedAt` does not move: it tracks appends only. Throws
 * `invalid_metadata` for a `patch` of the wrong shape.
 */
export function patchSessionInfo(info: SessionInfo, patch: SessionPatch): SessionInfo {
  assertSessionPatch(patch, info.id)
  const next = { ...info }
  if (patch.title !== undefined) next.title = patch.title
  if (patch.model !== undefined) next.model = patch.model
  if (patch.provider !== undefined) next.provider = patch.provider
  return next
}

/** Sorts newest updated first; ties by newest created, then by id, so the order is stable. */
export function sortNewestFirst(infos: SessionInfo[]): SessionInfo[] {
  return infos.sort(
    (a, b) =>
      b.updatedAt - a.updatedAt || b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  )
}

/** A deep enough copy that callers cannot change a store's state through what it returned. */
export function copyInfo(info: SessionInfo): SessionInfo {
  const copy = { ...info }
  if (info.forkedFrom) copy.forkedFrom = { ...info.forkedFrom }
  if (info.subAgent) copy.subAgent = { ...info.subAgent }
  return copy
}

/** Session defaults used by both stores. */
export function resolveClock(clock: StoreClock): Required<StoreClock> {
  return {
    now: clock.now ?? Date.now,
    createId: clock.createId ?? (() => globalThis.crypto.randomUUID()),
  }
}
