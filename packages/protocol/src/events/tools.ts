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
})
export type ToolProgressEvent = Static<typeof ToolProgressEvent>

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
