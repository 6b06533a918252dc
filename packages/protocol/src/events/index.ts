import { type Static, Type } from '@sinclair/typebox'
import { event } from './base.js'
import { DeveloperMessageEvent, TodoChangeEvent, UserMessageEvent } from './chat.js'
import { CompactionEndEvent, CompactionStartEvent } from './compaction.js'
import { TaskFinishEvent, TaskStartEvent, TurnEndEvent, TurnStartEvent } from './lifecycle.js'
import { ContextUsageEvent, TaskMetadataEvent, UsageEvent } from './metadata.js'
import {
  AssistantImageDeltaEvent,
  AssistantTextDeltaEvent,
  AssistantTextEndEvent,
  AssistantTextStartEvent,
  ResponseCompleteEvent,
  ThinkingDeltaEvent,
  ThinkingEndEvent,
  ThinkingStartEvent,
  ToolCallStartEvent,
} from './streaming.js'
import { EndEvent, ErrorEvent, InterruptEvent, WelcomeEvent } from './system.js'
import {
  ToolApprovalDecisionEvent,
  ToolApprovalRequestEvent,
  ToolCallEvent,
  ToolProgressEvent,
  ToolResultEvent,
} from './tools.js'

export * from './base.js'
export * from './chat.js'
export * from './compaction.js'
export * from './lifecycle.js'
export * from './metadata.js'
export * from './streaming.js'
export * from './system.js'
export * from './tools.js'

/** The events a replay of persisted history produces (no streaming deltas). */
export const ReplayEvent = Type.Union([
  TaskStartEvent,
  TaskFinishEvent,
  TurnStartEvent,
  TurnEndEvent,
  UserMessageEvent,
  DeveloperMessageEvent,
  ResponseCompleteEvent,
  AssistantImageDeltaEvent,
  ToolCallEvent,
  ToolProgressEvent,
  ToolApprovalRequestEvent,
  ToolApprovalDecisionEvent,
  ToolResultEvent,
  UsageEvent,
  TaskMetadataEvent,
  TodoChangeEvent,
  ErrorEvent,
  InterruptEvent,
  CompactionStartEvent,
  CompactionEndEvent,
])
export type ReplayEvent = Static<typeof ReplayEvent>

/** A whole session's history as replay events, for a UI loading a session. */
export const ReplayHistoryEvent = event('replay_history', {
  events: Type.Array(ReplayEvent),
  /** Milliseconds since the Unix epoch of the session's last change. */
  updatedAt: Type.Number(),
  isLoad: Type.Boolean(),
})
export type ReplayHistoryEvent = Static<typeof ReplayHistoryEvent>

/** Every protocol event, discriminated on `type`. */
export const Event = Type.Union([
  TaskStartEvent,
  TaskFinishEvent,
  TurnStartEvent,
  TurnEndEvent,
  ThinkingStartEvent,
  ThinkingDeltaEvent,
  ThinkingEndEvent,
  AssistantTextStartEvent,
  AssistantTextDeltaEvent,
  AssistantTextEndEvent,
  AssistantImageDeltaEvent,
  ToolCallStartEvent,
  ResponseCompleteEvent,
  ToolCallEvent,
  ToolProgressEvent,
  ToolApprovalRequestEvent,
  ToolApprovalDecisionEvent,
  ToolResultEvent,
  UsageEvent,
  TaskMetadataEvent,
  ContextUsageEvent,
  UserMessageEvent,
  DeveloperMessageEvent,
  TodoChangeEvent,
  WelcomeEvent,
  ErrorEvent,
  InterruptEvent,
  EndEvent,
  ReplayHistoryEvent,
  CompactionStartEvent,
  CompactionEndEvent,
])
export type Event = Static<typeof Event>
export type EventType = Event['type']
/** The event of one `type`. */
export type EventOf<T extends EventType> = Extract<Event, { type: T }>
