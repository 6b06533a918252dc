import { type Static, Type } from '@sinclair/typebox'
import { CompactionReason } from '../compaction-reason.js'
import { event } from './base.js'

export { CompactionReason }

/** The engine starts summarising the session's older part (see the `compaction` history record). */
export const CompactionStartEvent = event('compaction_start', {
  reason: CompactionReason,
  /** The estimated input tokens of the next request before compaction. */
  tokensBefore: Type.Integer({ minimum: 0 }),
})
export type CompactionStartEvent = Static<typeof CompactionStartEvent>

/**
 * A compaction ended. `compacted` is true when a `compaction` record was persisted (then
 * `summary`, `firstKeptId` and `tokensAfter` are set); false when there was nothing to summarise,
 * the summary failed (`errorMessage`) or the user interrupted it.
 */
export const CompactionEndEvent = event('compaction_end', {
  reason: CompactionReason,
  compacted: Type.Boolean(),
  tokensBefore: Type.Integer({ minimum: 0 }),
  tokensAfter: Type.Optional(Type.Integer({ minimum: 0 })),
  summary: Type.Optional(Type.String()),
  firstKeptId: Type.Optional(Type.String()),
  errorMessage: Type.Optional(Type.String()),
})
export type CompactionEndEvent = Static<typeof CompactionEndEvent>
