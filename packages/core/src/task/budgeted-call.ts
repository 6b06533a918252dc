import { type LLMClient, type LLMRequest, ProviderError } from '@kode/providers'
import { type ContextBudget, compactionTrigger, measureBudget } from '../compaction/budget.js'
import { type CompactionContext, compact } from '../compaction/compact.js'
import type { CompactionSettings } from '../compaction/options.js'
import { statusAndCode } from '../error-fields.js'
import type { TaskAccounting } from './accounting.js'
import { callModel, type ModelResult } from './model-call.js'
import { hookedRequest } from './model-hook.js'
import type { TaskRuntime } from './runtime.js'

/**
 * The turn's model call with the context budget kept: before the call the request's budget is
 * measured and reported (`context_usage` with `estimated: true`, after a compaction it caused);
 * when the request's estimated input passes the threshold (see `compactionTrigger`), the session is compacted first; when the provider still
 * answers that the request is larger than the context window, the session is compacted once and
 * the call sent once more. An overflow that remains (or with compaction off) fails the call with
 * an error naming the sizes; an interrupt during either compaction reads as aborted, with no call made. `request` builds the request from the session as it is then; `send`
 * makes the call (by default `callModel`; the turn passes one that runs the host's hooks first).
 */
export async function callModelWithinBudget(
  rt: TaskRuntime,
  client: LLMClient,
  request: () => LLMRequest,
  accounting: TaskAccounting,
  send: (request: LLMRequest) => Promise<ModelResult> = (sent) => callModel(rt, client, sent, accounting),
): Promise<ModelResult> {
  const compaction = rt.settings.compaction
  let sent = request()
  let budget = budgetOf(rt, client, sent)
  // A summary that failed for this call: an overflow then ends the task rather than summarising
  // the same records again, which would most likely fail the same way (a cut summary, a down model).
  let failedSummary: string | undefined
  const trigger =
    compaction && budget.inputLimit !== undefined
      ? compactionTrigger(compaction.threshold, budget.inputLimit, instructionTokensOf(rt, sent))
      : undefined
  if (compaction && trigger !== undefined && budget.inputTokens > trigger) {
    const done = await compact(contextOf(rt, compaction, client, sent, accounting), 'threshold', budget)
    if (done.compacted) {
      sent = request()
      budget = budgetOf(rt, client, sent)
    } else if (done.reason === 'failed') failedSummary = done.errorMessage
    // Interrupted during the compaction: no call follows, so no budget for it and no hook.
    if (rt.signal.aborted) return { kind: 'aborted', partial: undefined }
  }
  reportBudget(rt, budget)
  const result = await send(sent)
  if (!isOverflow(result)) return result
  const before = budgetOf(rt, client, sent)
  if (!compaction) return { kind: 'failed', error: tooLarge(result.error, before, false) }
  if (failedSummary !== undefined) {
    return { kind: 'failed', error: tooLarge(result.error, before, false, summaryFailed(failedSummary)) }
  }
  if (before.inputLimit !== undefined && trigger === undefined) {
    // Summarising the history cannot make room the instructions alone take.
    const why = `The system prompt and tool definitions alone take about ${instructionTokensOf(rt, sent)} tokens, which no compaction shrinks. `
    return { kind: 'failed', error: tooLarge(result.error, before, false, why) }
  }
  // Interrupted before or during the compaction: the user stopped the task, which did not fail.
  if (rt.signal.aborted) return { kind: 'aborted', partial: undefined }
  const done = await compact(contextOf(rt, compaction, client, sent, accounting), 'overflow', before)
  if (!done.compacted) {
    if (done.reason === 'aborted' || rt.signal.aborted) return { kind: 'aborted', partial: undefined }
    return { kind: 'failed', error: tooLarge(result.error, before, false, noRoom(done)) }
  }
  sent = request()
  const retryBudget = budgetOf(rt, client, sent)
  reportBudget(rt, retryBudget)
  const retried = await send(sent)
  if (!isOverflow(retried)) return retried
  return { kind: 'failed', error: tooLarge(retried.error, retryBudget, true) }
}

/** `context_usage` before the call (`estimated: true`), when the model's window is known. */
function reportBudget(rt: TaskRuntime, budget: ContextBudget): void {
  const { contextWindow, inputLimit, inputTokens, outputReserve } = budget
  if (!contextWindow || inputLimit === undefined) return
  rt.events.emit('context_usage', {
    contextPercent: (inputTokens / contextWindow) * 100,
    contextTokens: inputTokens,
    contextWindow,
    estimated: true,
    outputReserve,
    inputLimit,
  })
}

function isOverflow(result: ModelResult): result is Extract<ModelResult, { kind: 'failed' }> {
  return result.kind === 'failed' && result.error.kind === 'context_overflow'
}

function budgetOf(rt: TaskRuntime, client: LLMClient, request: LLMRequest): ContextBudget {
  const { journal, settings } = rt
  return measureBudget(request, journal.modelRecords, journal.freshFrom, client, settings.estimator)
}

function instructionTokensOf(rt: TaskRuntime, request: LLMRequest): number {
  return rt.settings.estimator.instructions(request.system, request.tools)
}

function contextOf(
  rt: TaskRuntime,
  compaction: CompactionSettings,
  client: LLMClient,
  request: LLMRequest,
  accounting: TaskAccounting,
): CompactionContext {
  return {
    journal: rt.journal,
    events: rt.events,
    settings: rt.settings,
    compaction,
    client,
    signal: rt.signal,
    instructionTokens: instructionTokensOf(rt, request),
    accounting,
    hostFailure: () => rt.hostFailure(),
    prepare: (summary) => hookedRequest(rt, summary),
    providerOptions: rt.modelSettings.providerOptions,
  }
}

/** Why the overflow's compaction made no room, a sentence (empty when there is nothing to say). */
function noRoom(done: {
  reason: 'nothing_to_compact' | 'failed' | 'aborted'
  errorMessage?: string
}): string {
  // Every record left is one a compaction always keeps: the sizes alone would not say why.
  if (done.reason === 'nothing_to_compact') return NOTHING_LEFT
  return done.errorMessage === undefined ? '' : summaryFailed(done.errorMessage)
}

const NOTHING_LEFT =
  "Compaction found nothing more to summarise: it always keeps the task's new input, a paused turn to carry on and a response whose calls wait for their results. "

function summaryFailed(message: string): string {
  return `The compaction that was to make room failed: ${message} `
}

/** The provider's overflow error, reworded to name the sizes (and `why` compaction made no room, a sentence). */
function tooLarge(
  error: ProviderError,
  budget: ContextBudget,
  afterCompaction: boolean,
  why = '',
): ProviderError {
  const window =
    budget.contextWindow === undefined
      ? 'the window is unknown'
      : `the window is ${budget.contextWindow} tokens`
  const message =
    `The request does not fit the model's context window${afterCompaction ? ' even after compaction' : ''}: ` +
    `about ${budget.inputTokens} input tokens + ${budget.outputReserve} reserved for output; ${window}. ` +
    why +
    error.message
  const failure = new ProviderError(message, {
    retryable: false,
    kind: 'context_overflow',
    cause: error,
    ...statusAndCode(error),
    ...(error.providerMessage === undefined ? {} : { providerMessage: error.providerMessage }),
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
  })
  if (error.partial) failure.partial = error.partial
  return failure
}
