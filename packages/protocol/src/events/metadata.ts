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

/**
 * How full the model's context window is. Emitted twice per model call: before it (`estimated:
 * true`: the input tokens the request will take, with the budget it is checked against), and
 * after the response (the measured input plus output of that response). `contextPercent` is
 * always `contextTokens` of `contextWindow`.
 */
export const ContextUsageEvent = event('context_usage', {
  contextPercent: Type.Number({ minimum: 0 }),
  contextTokens: Type.Optional(Type.Integer({ minimum: 0 })),
  contextWindow: Type.Optional(Type.Integer({ minimum: 0 })),
  /** True on the figure reported before a call: an estimate of the request about to be sent. */
  estimated: Type.Optional(Type.Boolean()),
  /** Before a call: the tokens kept free for the response (`maxOutputTokens`, else the model's). */
  outputReserve: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Before a call: the most input the request may take, `contextWindow - outputReserve`. */
  inputLimit: Type.Optional(Type.Integer({ minimum: 0 })),
})
export type ContextUsageEvent = Static<typeof ContextUsageEvent>
