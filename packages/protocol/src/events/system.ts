import { type Static, Type } from '@sinclair/typebox'
import { APP_SESSION_ID, event } from './base.js'

/** A host greeting: where the agent works and which model it talks to. */
export const WelcomeEvent = event('welcome', {
  workDir: Type.String(),
  model: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
})
export type WelcomeEvent = Static<typeof WelcomeEvent>

/** Something went wrong. `canRetry` says whether the engine is retrying (or the host may). */
export const ErrorEvent = event('error', {
  errorMessage: Type.String(),
  canRetry: Type.Boolean(),
})
export type ErrorEvent = Static<typeof ErrorEvent>

/** The user interrupted the running task. */
export const InterruptEvent = event('interrupt', {})
export type InterruptEvent = Static<typeof InterruptEvent>

/** Global display shutdown; its `sessionId` is always `__app__`. */
export const EndEvent = Type.Object(
  {
    type: Type.Literal('end'),
    sessionId: Type.Literal(APP_SESSION_ID),
    timestamp: Type.Number(),
  },
  { $id: 'end_event' },
)
export type EndEvent = Static<typeof EndEvent>
