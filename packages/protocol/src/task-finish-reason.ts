import { type Static, Type } from '@sinclair/typebox'

/** Why a task ended: its `task_finish` event's, its outcome's and its `task_metadata` record's `reason`. */
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
