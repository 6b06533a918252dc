import type { HistoryEvent, Message } from '@kode/protocol'
import type { TokenEstimator } from './estimate.js'

/** What a compaction summarises and what it keeps. */
export interface CompactionPlan {
  /** The messages to summarise, oldest first (the previous summary is passed on its own). */
  summarised: Message[]
  /** The first record kept verbatim; `undefined` when nothing is kept. */
  firstKept: HistoryEvent | undefined
  /** Estimated tokens of the kept messages. */
  keptTokens: number
}

/**
 * Splits the model's records (after the leading system prompt and summary, from `bodyFrom`) into a
 * part to summarise and the most recent part kept verbatim: at most `keepRecent` turns (one
 * assistant response and its tool results each), at most `keepTokens` tokens, fewer when they do
 * not fit. The kept part starts at a user or assistant message, never at a tool result or a
 * developer message, so a tool call and its result are never split and a kept response keeps
 * everything its thinking signatures were made with. `undefined` when there is nothing to summarise.
 */
export function planCompaction(
  records: readonly HistoryEvent[],
  bodyFrom: number,
  keepRecent: number,
  keepTokens: number,
  estimator: TokenEstimator,
): CompactionPlan | undefined {
  let cut = records.length
  let keptTokens = 0
  let tokens = 0
  let turns = 0
  for (let i = records.length - 1; i >= bodyFrom; i--) {
    const record = records[i]!
    if (!('role' in record)) continue
    tokens += estimator.message(record)
    if (record.role === 'assistant') turns++
    if (turns > keepRecent || tokens > keepTokens) break
    if (record.role === 'user' || record.role === 'assistant') {
      cut = i
      keptTokens = tokens
    }
  }
  const summarised: Message[] = []
  for (let i = bodyFrom; i < cut; i++) {
    const record = records[i]!
    if ('role' in record && record.role !== 'system') summarised.push(record)
  }
  if (summarised.length === 0) return undefined
  return { summarised, firstKept: records[cut], keptTokens }
}
