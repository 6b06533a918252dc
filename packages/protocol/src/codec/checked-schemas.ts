import type { TObject } from '@sinclair/typebox'
import { ApprovalDecisionRecord, ApprovalRequestRecord, ToolProgressRecord } from '../control-records.js'
import { CompactionRecord, ErrorRecord, InterruptRecord, TaskMetadataRecord } from '../history.js'
import {
  AssistantMessage,
  DeveloperMessage,
  SystemMessage,
  ToolResultMessage,
  UserMessage,
} from '../messages.js'

/** The messages of a history, one per `role`. */
export const MESSAGE_SCHEMAS = [
  SystemMessage,
  DeveloperMessage,
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
] as TObject[]

/** The other records of a history, one per `type`. */
export const RECORD_SCHEMAS = [
  ErrorRecord,
  TaskMetadataRecord,
  InterruptRecord,
  CompactionRecord,
  ApprovalRequestRecord,
  ApprovalDecisionRecord,
  ToolProgressRecord,
] as TObject[]
