import type { HistoryEvent } from '@kode/protocol'
import type { LLMClient, LLMRequest } from '@kode/providers'
import type { TokenEstimator } from './estimate.js'

/** The output reserve when neither the request nor the catalog names one: 4,096, at most a quarter of the window. */
export function defaultOutputReserve(contextWindow: number): number {
  return Math.min(4_096, Math.floor(contextWindow / 4))
}

/** The share of what the instructions leave of the input limit that the history always gets before a threshold compaction. */
const HISTORY_ROOM_SHARE = 0.25

/**
 * The input tokens past which a request is compacted before it is sent: `threshold` of the input
 * limit, moved up when the instructions (the system prompt and the tool definitions, which no
 * compaction shrinks) leave the history less than a quarter of what they leave of the limit.
 * Otherwise long tool definitions would make every turn compact, summarising the turn before.
 * `undefined` when the instructions alone take the whole limit: no compaction can make room then.
 */
export function compactionTrigger(
  threshold: number,
  inputLimit: number,
  instructionTokens: number,
): number | undefined {
  const left = inputLimit - instructionTokens
  if (left <= 0) return undefined
  return instructionTokens + Math.max(threshold * inputLimit - instructionTokens, left * HISTORY_ROOM_SHARE)
}

/** How many input tokens the next request takes, against what the model accepts. */
export interface ContextBudget {
  /** The request's input tokens: the last response's reported input and output plus an estimate of what came after. */
  inputTokens: number
  /** The model's context window (catalog), when known. */
  contextWindow: number | undefined
  /** Tokens kept free for the response: the request's `maxOutputTokens`, else the model's, else a default. */
  outputReserve: number
  /** `contextWindow - outputReserve`: the most input the request may have; `undefined` when the window is unknown. */
  inputLimit: number | undefined
}

/**
 * The budget of `request`. The last response after the latest compaction anchors it: its reported
 * `inputTokens` (the provider's own count of the request that produced it) plus its output, plus
 * the estimate of every record after it. Without such a response (the first call, or the first
 * after a compaction) the whole request is estimated.
 */
export function measureBudget(
  request: LLMRequest,
  records: readonly HistoryEvent[],
  freshFrom: number,
  client: LLMClient,
  estimator: TokenEstimator,
): ContextBudget {
  const info = client.modelInfo
  const contextWindow = info?.contextWindow
  const outputReserve =
    request.maxOutputTokens ??
    info?.maxOutputTokens ??
    (contextWindow === undefined ? 0 : defaultOutputReserve(contextWindow))
  const inputLimit = contextWindow === undefined ? undefined : Math.max(0, contextWindow - outputReserve)
  return {
    inputTokens: inputTokens(request, records, freshFrom, estimator),
    contextWindow,
    outputReserve,
    inputLimit,
  }
}

function inputTokens(
  request: LLMRequest,
  records: readonly HistoryEvent[],
  freshFrom: number,
  estimator: TokenEstimator,
): number {
  let added = 0
  for (let i = records.length - 1; i >= freshFrom; i--) {
    const record = records[i]!
    if (!('role' in record)) continue
    const input = record.role === 'assistant' ? record.usage?.inputTokens : undefined
    if (input !== undefined && record.role === 'assistant') {
      return input + (record.usage?.outputTokens ?? estimator.message(record)) + added
    }
    added += estimator.message(record)
  }
  let total = estimator.instructions(request.system, request.tools)
  for (const message of request.messages) total += estimator.message(message)
  return total
}
