import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { ApprovalDecisionRecord, ApprovalRequestRecord, ToolProgressRecord } from './control-records.js'
import {
  AssistantMessage,
  DeveloperMessage,
  Message,
  recordBase,
  SystemMessage,
  ToolResultMessage,
  UserMessage,
} from './messages.js'
import { TaskMetadataSummary } from './metadata.js'

function record<T extends string, P extends Record<string, TSchema>>(type: T, props: P, $id: string) {
  return Type.Object({ type: Type.Literal(type), ...recordBase, ...props }, { $id })
}

/** A stream or API error that ended a response or task, kept so replay can show it. */
export const ErrorRecord = record(
  'error',
  {
    message: Type.String(),
    canRetry: Type.Boolean(),
    /** `ProviderError` fields when the error came from a provider. */
    status: Type.Optional(Type.Integer()),
    code: Type.Optional(Type.String()),
  },
  'ErrorRecord',
)
export type ErrorRecord = Static<typeof ErrorRecord>

/** A finished task's accounting. */
export const TaskMetadataRecord = record(
  'task_metadata',
  { metadata: TaskMetadataSummary },
  'TaskMetadataRecord',
)
export type TaskMetadataRecord = Static<typeof TaskMetadataRecord>

/**
 * An interrupt that no message carries: the user interrupted before any assistant output or tool
 * result existed. Otherwise interrupts are derived from `stopReason`/`status` `aborted`.
 */
export const InterruptRecord = record('interrupt', {}, 'InterruptRecord')
export type InterruptRecord = Static<typeof InterruptRecord>

export const HistoryRecord = Type.Union([
  ErrorRecord,
  TaskMetadataRecord,
  InterruptRecord,
  ApprovalRequestRecord,
  ApprovalDecisionRecord,
  ToolProgressRecord,
])
export type HistoryRecord = Static<typeof HistoryRecord>

/** What a session persists, in order: messages (on `role`) and records (on `type`). */
export const HistoryEvent = Type.Union([
  SystemMessage,
  DeveloperMessage,
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
  ErrorRecord,
  TaskMetadataRecord,
  InterruptRecord,
  ApprovalRequestRecord,
  ApprovalDecisionRecord,
  ToolProgressRecord,
])
export type HistoryEvent = Static<typeof HistoryEvent>

/** Narrows a history event to a message. */
export function isMessage(event: HistoryEvent): event is Message {
  return 'role' in event
}

export { ApprovalDecisionRecord, ApprovalRequestRecord, Message, ToolProgressRecord }
