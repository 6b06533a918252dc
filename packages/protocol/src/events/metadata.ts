import { type Static, Type } from '@sinclair/typebox'
import { TaskMetadataSummary } from '../metadata.js'
import { Usage } from '../usage.js'
import { event, responseEvent } from './base.js'

/** Usage of one model response (reconstructed from the assistant message, not persisted twice). */
export const UsageEvent = responseEvent('usage', {
  usage: Usage,
  costUsd: Type.Optional(Type.Number({ minimum: 0 })),
})
export type UsageEvent = Static<typeof UsageEvent>

export const TaskMetadataEvent = event('task_metadata', { metadata: TaskMetadataSummary })
export type TaskMetadataEvent = Static<typeof TaskMetadataEvent>

/** How full the model's context window is, in percent, after the last response. */
export const ContextUsageEvent = event('context_usage', {
  contextPercent: Type.Number({ minimum: 0 }),
  contextTokens: Type.Optional(Type.Integer({ minimum: 0 })),
  contextWindow: Type.Optional(Type.Integer({ minimum: 0 })),
})
export type ContextUsageEvent = Static<typeof ContextUsageEvent>
