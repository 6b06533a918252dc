import { type Static, Type } from '@sinclair/typebox'
import { TaskMetadata, ToolResultUiExtra } from '../metadata.js'
import { responseEvent } from './base.js'

/** A tool call is about to execute. `arguments` is the raw JSON text. */
export const ToolCallEvent = responseEvent('tool_call', {
  toolCallId: Type.String(),
  toolName: Type.String(),
  arguments: Type.String(),
})
export type ToolCallEvent = Static<typeof ToolCallEvent>

/** Progress reported by a running tool. */
export const ToolProgressEvent = responseEvent('tool_progress', {
  toolCallId: Type.String(),
  toolName: Type.String(),
  message: Type.String(),
  /** The ids of the other tool calls of the same response. */
  siblingToolCallIds: Type.Optional(Type.Array(Type.String())),
})
export type ToolProgressEvent = Static<typeof ToolProgressEvent>

/**
 * A tool call waits for the user's approval before it runs (the tool's `needsApproval`). The task
 * ends with reason `awaiting_approval`; the decision comes with `agent.continue`.
 */
export const ToolApprovalRequestEvent = responseEvent('tool_approval_request', {
  toolCallId: Type.String(),
  toolName: Type.String(),
  /** The call's arguments as the model wrote them (JSON text). */
  arguments: Type.String(),
})
export type ToolApprovalRequestEvent = Static<typeof ToolApprovalRequestEvent>

/** The user's decision on a call that waited for approval; an approved call runs next. */
export const ToolApprovalDecisionEvent = responseEvent('tool_approval_decision', {
  toolCallId: Type.String(),
  toolName: Type.String(),
  approved: Type.Boolean(),
  reason: Type.Optional(Type.String()),
})
export type ToolApprovalDecisionEvent = Static<typeof ToolApprovalDecisionEvent>

/** A tool call finished. An `aborted` result is reported as `error` followed by an `interrupt`. */
export const ToolResultEvent = responseEvent('tool_result', {
  toolCallId: Type.String(),
  toolName: Type.String(),
  result: Type.String(),
  uiExtra: Type.Optional(ToolResultUiExtra),
  status: Type.Union([Type.Literal('success'), Type.Literal('error')]),
  taskMetadata: Type.Optional(TaskMetadata),
  isLastInTurn: Type.Boolean(),
})
export type ToolResultEvent = Static<typeof ToolResultEvent>
