import { type Static, Type } from '@sinclair/typebox'
import { SubAgentState } from '../metadata.js'
import { TaskFinishReason } from '../task-finish-reason.js'
import { event } from './base.js'

export { TaskFinishReason }

/** A task (one user input) starts. `subAgentState` is set when the session is a sub-agent's. */
export const TaskStartEvent = event('task_start', { subAgentState: Type.Optional(SubAgentState) })
export type TaskStartEvent = Static<typeof TaskStartEvent>

/**
 * A task ended. `taskResult` is the final assistant text; `hasStructuredOutput` is true when the
 * run asked for a structured output and the answer validated against its schema.
 */
export const TaskFinishEvent = event('task_finish', {
  taskResult: Type.String(),
  hasStructuredOutput: Type.Boolean(),
  /** Why the task ended; absent on events from older producers. */
  reason: Type.Optional(TaskFinishReason),
})
export type TaskFinishEvent = Static<typeof TaskFinishEvent>

/** A turn (one model response and its tool calls) starts. */
export const TurnStartEvent = event('turn_start', {})
export type TurnStartEvent = Static<typeof TurnStartEvent>

export const TurnEndEvent = event('turn_end', {})
export type TurnEndEvent = Static<typeof TurnEndEvent>
