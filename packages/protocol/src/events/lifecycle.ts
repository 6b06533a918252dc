import { type Static, Type } from '@sinclair/typebox'
import { SubAgentState } from '../metadata.js'
import { event } from './base.js'

/** A task (one user input) starts. `subAgentState` is set when the session is a sub-agent's. */
export const TaskStartEvent = event('task_start', { subAgentState: Type.Optional(SubAgentState) })
export type TaskStartEvent = Static<typeof TaskStartEvent>

/** Why a task ended; absent on events from older producers. */
export const TaskFinishReason = Type.Union([
  Type.Literal('completed'),
  Type.Literal('max_turns'),
  Type.Literal('error'),
  Type.Literal('aborted'),
  /** Tool calls wait for the user's approval; `agent.continue` carries the task on. */
  Type.Literal('awaiting_approval'),
  /** A structured output was asked for and the answer did not validate, even after one corrective turn. */
  Type.Literal('structured_output_invalid'),
])
export type TaskFinishReason = Static<typeof TaskFinishReason>

/**
 * A task ended. `taskResult` is the final assistant text; `hasStructuredOutput` is true when the
 * run asked for a structured output and the answer validated against its schema.
 */
export const TaskFinishEvent = event('task_finish', {
  taskResult: Type.String(),
  hasStructuredOutput: Type.Boolean(),
  reason: Type.Optional(TaskFinishReason),
})
export type TaskFinishEvent = Static<typeof TaskFinishEvent>

/** A turn (one model response and its tool calls) starts. */
export const TurnStartEvent = event('turn_start', {})
export type TurnStartEvent = Static<typeof TurnStartEvent>

export const TurnEndEvent = event('turn_end', {})
export type TurnEndEvent = Static<typeof TurnEndEvent>
