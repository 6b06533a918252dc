import { type Static, Type } from '@sinclair/typebox'
import { CompactionReason } from './compaction-reason.js'
import { ApprovalDecisionRecord, ApprovalRequestRecord, ToolProgressRecord } from './control-records.js'
import {
  AssistantMessage,
  DeveloperMessage,
  Message,
  record,
  SystemMessage,
  ToolResultMessage,
  UserMessage,
} from './messages.js'
import { TaskMetadataSummary } from './metadata.js'
import { TaskFinishReason } from './task-finish-reason.js'
import { Usage } from './usage.js'

/**
 * Where the live run emitted an `error` or `interrupt` record's event, for replay: `own`, in a
 * turn of its own that got no response (a model call that failed or was interrupted before any
 * output); `none`, between turns. Absent (histories written before it, and an error after the
 * partial response it ended): in the open turn, if any.
 */
export const RecordTurn = Type.Union([Type.Literal('own'), Type.Literal('none')])
export type RecordTurn = Static<typeof RecordTurn>

/**
 * A compaction that saved nothing, on the record that says why: an `error` record (its summary
 * failed; the record's `message` says how) or an `interrupt` record (the user interrupted it).
 * It keeps what its `compaction_start` / `compaction_end` said live, so replay shows them where it
 * ran instead of the error or interrupt. A marker on those records rather than a record type of
 * its own, so releases that predate it still read the history: they show an error or interrupt.
 */
export const CompactionAttempt = Type.Object(
  {
    reason: CompactionReason,
    /** The estimated input tokens of the next request, which stayed as they were. */
    tokensBefore: Type.Integer({ minimum: 0 }),
    /**
     * Usage of the summary request, when a model answered it (a summary cut at the output limit,
     * empty, or failed or interrupted after it reported usage), summed over the attempts its
     * provider billed (the client's retries included): the task's `task_metadata` counts it, so
     * the history keeps it too. Absent when no model answered, and in histories written before it.
     */
    usage: Type.Optional(Usage),
    costUsd: Type.Optional(Type.Number({ minimum: 0 })),
    model: Type.Optional(Type.String()),
    /** The notices of the summary request's retries (see `CompactionRecord.retries`). */
    retries: Type.Optional(Type.Array(Type.String())),
  },
  { $id: 'CompactionAttempt' },
)
export type CompactionAttempt = Static<typeof CompactionAttempt>

/**
 * What a model call that left no message was billed for: an `error` or `interrupt` record of a
 * call that failed or was interrupted before any text, after its provider had reported usage
 * (Anthropic reports the input tokens as the message starts). The task's `task_metadata` counts
 * it, so the history keeps it too. Absent when the provider reported none, and in histories
 * written before these fields.
 */
const UnsavedCallUsage = {
  usage: Type.Optional(Usage),
  costUsd: Type.Optional(Type.Number({ minimum: 0 })),
  model: Type.Optional(Type.String()),
}

/**
 * A stream or API error that ended a response or task, kept so replay can show it; with `retry`,
 * one a model call was retried after; with `compaction`, a compaction whose summary failed (see
 * `CompactionAttempt`); with `usage`, what the failed call that left no message was billed for
 * (see `UnsavedCallUsage`).
 */
export const ErrorRecord = record(
  'error',
  {
    message: Type.String(),
    canRetry: Type.Boolean(),
    /** `ProviderError` fields when the error came from a provider. */
    status: Type.Optional(Type.Integer()),
    code: Type.Optional(Type.String()),
    turn: Type.Optional(RecordTurn),
    compaction: Type.Optional(CompactionAttempt),
    /**
     * The notice of a model call's retry (`canRetry: true`): the call went on, and the response
     * that followed belongs to the same turn. Replay shows it there, as live.
     */
    retry: Type.Optional(Type.Literal(true)),
    ...UnsavedCallUsage,
  },
  'ErrorRecord',
)
export type ErrorRecord = Static<typeof ErrorRecord>

/** A finished task's accounting. */
export const TaskMetadataRecord = record(
  'task_metadata',
  {
    metadata: TaskMetadataSummary,
    /**
     * The id of the user message that began the task, when the host chose it (`agent.run` with
     * `messageId`): the task's records run from that message to this record, and a host that
     * looks for them after a crash tells its task's end from a later task's.
     */
    inputId: Type.Optional(Type.String({ minLength: 1 })),
    /**
     * Why the task ended, as its `task_finish` event and its outcome said. Absent in histories
     * written before it was recorded. With it, the outcome of a task whose process died before
     * handing it back can be rebuilt from the history: an error record alone does not tell a task
     * that stopped at its turn limit (`max_turns`) or on an invalid structured answer from one that
     * failed.
     */
    reason: Type.Optional(TaskFinishReason),
  },
  'TaskMetadataRecord',
)
export type TaskMetadataRecord = Static<typeof TaskMetadataRecord>

/**
 * An interrupt that no message carries: the user interrupted before any assistant output or tool
 * result existed. Otherwise interrupts are derived from `stopReason`/`status` `aborted`. With
 * `compaction`, the user interrupted a compaction (see `CompactionAttempt`); with `usage`, what the
 * interrupted call was billed for (see `UnsavedCallUsage`).
 */
export const InterruptRecord = record(
  'interrupt',
  { turn: Type.Optional(RecordTurn), compaction: Type.Optional(CompactionAttempt), ...UnsavedCallUsage },
  'InterruptRecord',
)
export type InterruptRecord = Static<typeof InterruptRecord>

/**
 * The session's older part was summarised to fit the model's context window. Written once, whole,
 * after the summary exists; the records it summarises stay in the history (replay and export show
 * them), but from this record on the provider view is the latest system prompt, the summary (as a
 * user message), then the records from `firstKeptId` on.
 */
export const CompactionRecord = record(
  'compaction',
  {
    /** The summary of everything before `firstKeptId` (an earlier summary included). */
    summary: Type.String(),
    /** The id of the first record kept verbatim; the summary replaces everything before it. */
    firstKeptId: Type.String(),
    /** The estimated input tokens of the next request before compaction. */
    tokensBefore: Type.Integer({ minimum: 0 }),
    /** The same estimate after compaction (summary and kept records). */
    tokensAfter: Type.Integer({ minimum: 0 }),
    /** What started it: the budget threshold, a provider's context-overflow error, or the host. */
    reason: CompactionReason,
    /**
     * Usage of the summary request, when a model wrote the summary: of every attempt its provider
     * billed, summed (the client's retries included); `model` is the last one's.
     */
    usage: Type.Optional(Usage),
    costUsd: Type.Optional(Type.Number({ minimum: 0 })),
    model: Type.Optional(Type.String()),
    /**
     * The notices of the summary request's retries by the client, in order: the `errorMessage` of
     * each retryable `error` event the compaction emitted live, which replay shows again. Absent
     * when the client retried nothing, and in histories written before it.
     */
    retries: Type.Optional(Type.Array(Type.String())),
  },
  'CompactionRecord',
)
export type CompactionRecord = Static<typeof CompactionRecord>

export const HistoryRecord = Type.Union([
  ErrorRecord,
  TaskMetadataRecord,
  InterruptRecord,
  ApprovalRequestRecord,
  ApprovalDecisionRecord,
  ToolProgressRecord,
  CompactionRecord,
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
  CompactionRecord,
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
