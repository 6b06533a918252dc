import { type HistoryEvent, type Message, toolCallsOf } from '@kode/protocol'
import { isPausedTurn } from '../paused-turn.js'
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
 * everything its thinking signatures were made with. A paused response (see `isPausedTurn`) and the
 * responses that carry it on are one turn, never split: the wire sends them as one message. The last response is always kept while some of
 * its calls have no result (a session paused for approval), and so is a paused turn the next call
 * carries on (the last message is a paused response), and the task's new input (the last user
 * message, when no response came after it), whatever its size. `undefined` when there is nothing to
 * summarise.
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
    const continues = record.role === 'assistant' && continuesPaused(records, i, bodyFrom)
    if (record.role === 'assistant' && !continues) turns++
    if (turns > keepRecent || tokens > keepTokens) break
    if (record.role === 'user' || (record.role === 'assistant' && !continues)) {
      cut = i
      keptTokens = tokens
    }
  }
  // A response whose calls are not all answered yet (awaiting approval, or left by a dead process)
  // is kept: the results still to come must find their calls in what the model sees. So is the
  // task's input (the last user message, with no response after it), however large: summarised, it
  // would reach the model as a transcript's excerpt, though it may well fit once the rest is. So is a
  // paused turn the next call carries on: the model goes on from its paused response, not from a
  // summary, and only from the whole turn as sent (a thinking turn starts with its signed thinking).
  const keepFrom = Math.min(
    openResponse(records, bodyFrom) ?? records.length,
    newInput(records, bodyFrom) ?? records.length,
    pausedTurn(records, bodyFrom) ?? records.length,
  )
  if (keepFrom < cut) {
    cut = keepFrom
    keptTokens = 0
    for (let i = keepFrom; i < records.length; i++) {
      const record = records[i]!
      if ('role' in record) keptTokens += estimator.message(record)
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

/**
 * Index of the first response of the turn the last message paused (see `isPausedTurn`), which the
 * next model call carries on; `undefined` when the last message is no paused response.
 */
function pausedTurn(records: readonly HistoryEvent[], from: number): number | undefined {
  // The run of paused responses the messages end with: the first of them started the turn.
  let start: number | undefined
  for (let i = records.length - 1; i >= from; i--) {
    const record = records[i]!
    if (!('role' in record)) continue
    if (record.role !== 'assistant' || !isPausedTurn(record)) return start
    start = i
  }
  return start
}

/** Whether the message before `records[at]` is a paused response, which `records[at]` carries on. */
function continuesPaused(records: readonly HistoryEvent[], at: number, from: number): boolean {
  for (let i = at - 1; i >= from; i--) {
    const record = records[i]!
    if (!('role' in record)) continue
    return record.role === 'assistant' && isPausedTurn(record)
  }
  return false
}

/**
 * Index of the last user message when no response came after it: the task's input. Only the
 * last: an earlier input that got no response (its task failed, one too large for the window
 * among them) is summarised, or it would be kept, and fail, at every later compaction.
 */
function newInput(records: readonly HistoryEvent[], from: number): number | undefined {
  for (let i = records.length - 1; i >= from; i--) {
    const record = records[i]!
    if (!('role' in record)) continue
    if (record.role === 'assistant') return undefined
    if (record.role === 'user') return i
  }
  return undefined
}

/** Index of the last assistant message when some of its tool calls have no result after it. */
function openResponse(records: readonly HistoryEvent[], from: number): number | undefined {
  const answered = new Set<string>()
  for (let i = records.length - 1; i >= from; i--) {
    const record = records[i]!
    if (!('role' in record)) continue
    if (record.role === 'tool') answered.add(record.toolCallId)
    else if (record.role === 'assistant') {
      return toolCallsOf(record).some((call) => !answered.has(call.id)) ? i : undefined
    }
  }
  return undefined
}
