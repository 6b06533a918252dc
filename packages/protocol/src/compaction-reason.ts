import { type Static, Type } from '@sinclair/typebox'

/** What started a compaction: the budget threshold, a provider's context-overflow error, or the host. */
export const CompactionReason = Type.Union([
  Type.Literal('threshold'),
  Type.Literal('overflow'),
  Type.Literal('manual'),
])
export type CompactionReason = Static<typeof CompactionReason>
