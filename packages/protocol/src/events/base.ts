import { type TSchema, Type } from '@sinclair/typebox'

/** Session id of the one event that is not about a session: the global `end`. */
export const APP_SESSION_ID = '__app__'

const eventBase = {
  sessionId: Type.String(),
  /** Milliseconds since the Unix epoch. */
  timestamp: Type.Number(),
}

const responseBase = {
  ...eventBase,
  /** The provider's response id, when known; correlates every event of one model response. */
  responseId: Type.Optional(Type.String()),
}

/** Declares an event that is not tied to one model response. */
export function event<T extends string, P extends Record<string, TSchema>>(type: T, props: P) {
  return Type.Object({ type: Type.Literal(type), ...eventBase, ...props }, { $id: `${type}_event` })
}

/** Declares an event scoped to one model response (carries `responseId`). */
export function responseEvent<T extends string, P extends Record<string, TSchema>>(type: T, props: P) {
  return Type.Object({ type: Type.Literal(type), ...responseBase, ...props }, { $id: `${type}_event` })
}
