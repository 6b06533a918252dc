import {
  type AssistantMessage,
  type CompactionReason,
  type CompactionRecord,
  cutText,
  type ErrorRecord,
  type EventOf,
  type HistoryEvent,
  type InterruptRecord,
  joinText,
  type Message,
} from '@kode/protocol'
import {
  type LLMClient,
  type LLMRequest,
  ProviderError,
  type RetryInfo,
  type RetryPolicy,
  retryAllowed,
  retryDelayMs,
} from '@kode/providers'
import { abortableSleep } from '../abortable-sleep.js'
import { addBilled, type Billed, billedBy } from '../billed.js'
import { retryNotice } from '../retry-notice.js'
import { thrownText } from '../thrown-text.js'
import { type ContextBudget, compactionTrigger } from './budget.js'
import { summaryMessage } from './compacted-history.js'
import type { TokenEstimator } from './estimate.js'
import type { CompactionSettings } from './options.js'
import { type CompactionPlan, planCompaction } from './plan.js'
import { summaryProviderOptions } from './summary-options.js'
import { COMPACTION_PROMPT, summaryRequest, transcriptOf } from './summary-request.js'

/** How a compaction ended: a record was persisted, or why not. */
export type CompactionResult =
  | { compacted: true; record: CompactionRecord }
  | {
      compacted: false
      /** Nothing could be summarised, the summary failed, or the user interrupted it. */
      reason: 'nothing_to_compact' | 'failed' | 'aborted'
      errorMessage?: string
    }

/**
 * What a compaction's record keeps of its summary request: what its provider billed (the task
 * counted it), and the notices of the client's retries (the compaction announced them).
 */
type RequestTrace = Billed & { retries?: string[] }

/**
 * A compaction's result, and for one that saved nothing what its record keeps of its summary
 * request, when it made one that was billed or retried.
 */
type SummaryOutcome = Extract<CompactionResult, { compacted: true }> | (Unsaved & { spent?: RequestTrace })

type Unsaved = Extract<CompactionResult, { compacted: false }>

/** The session a compaction summarises and appends its record to (the engine's journal is one). */
export interface CompactionJournal {
  /** The records the model sees now (after the latest compaction, if any). */
  readonly modelRecords: readonly HistoryEvent[]
  /** The latest compaction record, if the session was compacted. */
  readonly compaction: CompactionRecord | undefined
  persist(record: CompactionRecord | ErrorRecord | InterruptRecord): Promise<void>
}

/** A compaction's own events, and `error` with `canRetry: true` for each retry of its summary request. */
type CompactionEventType = 'compaction_start' | 'compaction_end' | 'error'

/** Where a compaction announces itself (the task's events are one). */
export interface CompactionEvents {
  emit<T extends CompactionEventType>(
    type: T,
    fields: Omit<EventOf<T>, 'type' | 'sessionId' | 'timestamp'>,
  ): void
}

/** What a compaction works with: the session's journal and events, the model, the task's accounting. */
export interface CompactionContext {
  journal: CompactionJournal
  events: CompactionEvents
  /** The agent's settings it uses: the token counter, ids, the clock, and the engine's retries. */
  settings: {
    readonly estimator: TokenEstimator
    readonly retry: RetryPolicy
    createId(): string
    now(): number
  }
  compaction: CompactionSettings
  client: LLMClient
  signal: AbortSignal
  /** Tokens every request carries besides its messages (system text, tool definitions). */
  instructionTokens: number
  /** The task's accounting, which every attempt of the summary request its provider billed joins. */
  accounting?: { addResponse(message: AssistantMessage): void }
  /**
   * Why `signal` aborted when the user did not interrupt (a host's listener or hook threw): a
   * compaction so stopped failed, with this message, as the task does.
   */
  hostFailure?: () => { message: string } | undefined
  /**
   * The host's `beforeModelCall` over the summary request, which is a request to the model like a
   * turn's: a hook that redacts, routes or refuses requests must see it too. `undefined` when nothing
   * is to be sent: the hook threw (which aborts `signal`, see `hostFailure`) or the user interrupted.
   */
  prepare?: (request: LLMRequest) => Promise<LLMRequest | undefined>
  /**
   * The task's `modelSettings.providerOptions`, which the summary request carries too: a gateway
   * or deployment that needs a field of its own on every request (a route, `store: false`, a user
   * id) needs it on this one, without a turn's extended thinking (see `summaryProviderOptions`).
   * The other settings are a turn's (its tools, its output budget).
   */
  providerOptions?: LLMRequest['providerOptions']
}

/** Why a summary the model stopped at its output limit (`stopReason: 'length'`) is not saved. */
const CUT_SUMMARY = "The summary was cut off at the model's output limit, so nothing was compacted."

/** Why a summary its provider ended for another reason than a finished answer is not saved. */
function unfinishedSummary(rawStopReason: string): string {
  return `The summary ended without a finished answer (the provider said ${cutText(rawStopReason, 80)}), so nothing was compacted.`
}

/** Share of the usable window the kept part may take, leaving room for the summary and new work. */
const KEEP_SHARE = 0.4
/** Share of the window the summary may take. */
const SUMMARY_SHARE = 0.15
/** How many times a summary request the provider finds too long is sent again, each time halved. */
const OVERFLOW_RETRIES = 3

/**
 * One compaction: plans the split (with nothing to summarise it returns at once, emitting nothing),
 * then, between `compaction_start` and `compaction_end`, has the older
 * part summarised (each retry of the summary request announced between them as an `error` with
 * `canRetry: true`), then persists the `compaction` record in one append. Nothing is written before
 * the summary exists, so an interrupted or crashed compaction leaves the model's view as it was
 * and the next call compacts again. A summary that failed persists an `error` record marked with
 * the compaction instead, an interrupted one an `interrupt` record so marked, so that replay shows
 * the events the live run showed. Only a store failure is thrown.
 */
export async function compact(
  ctx: CompactionContext,
  reason: CompactionReason,
  budget: ContextBudget,
): Promise<CompactionResult> {
  const { journal, events } = ctx
  const tokensBefore = budget.inputTokens
  const planned = planFor(ctx, reason, budget)
  // Nothing to summarise: no request, no record and no events, so a replay shows what this showed.
  if (!planned) return { compacted: false, reason: 'nothing_to_compact' }
  events.emit('compaction_start', { reason, tokensBefore })
  const outcome = hostFailed(ctx, await summarise(ctx, reason, budget, planned))
  if (outcome.compacted) {
    const { record } = outcome
    await journal.persist(record)
    events.emit('compaction_end', {
      reason,
      compacted: true,
      tokensBefore,
      tokensAfter: record.tokensAfter,
      summary: record.summary,
      firstKeptId: record.firstKeptId,
    })
    return outcome
  }
  const { spent, ...result } = outcome
  const { errorMessage } = result
  await journal.persist(attemptRecord(ctx, result, reason, tokensBefore, spent))
  events.emit('compaction_end', {
    reason,
    compacted: false,
    tokensBefore,
    ...(errorMessage === undefined ? {} : { errorMessage }),
  })
  return result
}

/** A compaction stopped by a host's failure, not the user: failed, with the task's failure message. */
function hostFailed(ctx: CompactionContext, outcome: SummaryOutcome): SummaryOutcome {
  if (outcome.compacted || outcome.reason !== 'aborted') return outcome
  const failure = ctx.hostFailure?.()
  return failure ? { ...outcome, reason: 'failed', errorMessage: failure.message } : outcome
}

/** The record of a compaction whose summary failed or was interrupted (see `CompactionAttempt`). */
function attemptRecord(
  ctx: CompactionContext,
  result: Unsaved,
  reason: CompactionReason,
  tokensBefore: number,
  spent: RequestTrace | undefined,
): ErrorRecord | InterruptRecord {
  const { createId, now } = ctx.settings
  // The summary's usage goes on the marker (the task counted it, so the history must carry it), and
  // its retries' notices (announced live, so replay shows them).
  const base = { id: createId(), createdAt: now(), compaction: { reason, tokensBefore, ...spent } }
  if (result.reason === 'aborted') return { type: 'interrupt', ...base }
  return { type: 'error', ...base, message: result.errorMessage ?? 'The summary failed.', canRetry: false }
}

/** What a compaction summarises and keeps, and what it builds on. */
interface Planned {
  plan: CompactionPlan
  /** The compaction before this one, whose summary the new one extends. */
  previous: CompactionRecord | undefined
  /** The latest system prompt's tokens (only it is sent). */
  systemTokens: number
}

/** The split a compaction would make now; `undefined` when there is nothing to summarise. */
function planFor(
  ctx: CompactionContext,
  reason: CompactionReason,
  budget: ContextBudget,
): Planned | undefined {
  const { journal, settings } = ctx
  const estimator = settings.estimator
  const records = journal.modelRecords
  const previous = journal.compaction
  const bodyFrom = previous ? records.findIndex((record) => record.id === previous.id) + 1 : 0
  // Only the latest system prompt is sent.
  const system = records.findLast((r) => 'role' in r && r.role === 'system')
  const systemTokens = system && 'role' in system ? estimator.message(system) : 0
  const keepTokens = keepBudget(ctx, reason, budget, systemTokens)
  const plan = planCompaction(records, bodyFrom, ctx.compaction.keepRecent, keepTokens, estimator)
  return plan ? { plan, previous, systemTokens } : undefined
}

async function summarise(
  ctx: CompactionContext,
  reason: CompactionReason,
  budget: ContextBudget,
  { plan, previous, systemTokens }: Planned,
): Promise<SummaryOutcome> {
  const { settings, client, signal, events } = ctx
  const estimator = settings.estimator

  const window = budget.contextWindow
  const modelMax = client.modelInfo?.maxOutputTokens
  const summaryTokens =
    window === undefined
      ? modelMax
      : Math.min(modelMax ?? window, Math.max(256, Math.floor(window * SUMMARY_SHARE)))
  const room =
    window === undefined
      ? Number.POSITIVE_INFINITY
      : window -
        (summaryTokens ?? 0) -
        estimator.text(COMPACTION_PROMPT) -
        (previous ? estimator.text(previous.summary) : 0) -
        64
  const transcript = transcriptOf(plan.summarised, Math.max(0, room), estimator)
  const previousSummary = previous?.summary

  let summary: string
  // What the summary request was billed, over every attempt its provider billed (those the client
  // retried, then the last): counted as it comes, as the task's responses are, and kept on the
  // compaction's one record, saved or not, so the history carries what the task counted.
  let billed: Billed = {}
  const charge = (message: AssistantMessage) => {
    ctx.accounting?.addResponse(message)
    billed = addBilled(billed, billedBy(message))
  }
  // The client's retries of the summary request, announced as a turn's are and kept on the same record.
  const retries: string[] = []
  const trace = (): RequestTrace => (retries.length > 0 ? { ...billed, retries: [...retries] } : billed)
  const unsaved = (result: Unsaved): SummaryOutcome => {
    const spent = trace()
    return Object.keys(spent).length > 0 ? { ...result, spent } : result
  }
  // Interrupted before it began (a listener of compaction_start, a signal given aborted): no summary.
  if (signal.aborted) return { compacted: false, reason: 'aborted' }
  try {
    const summarize = ctx.compaction.summarize
    if (summarize) {
      // A host's summarizer that ignores its signal must not hold the task: the interrupt wins.
      // A summarizer that answers at once returns the string itself, not a promise of it.
      summary = await untilAborted(
        Promise.resolve(
          summarize({
            transcript,
            previousSummary,
            messages: plan.summarised,
            prompt: COMPACTION_PROMPT,
            signal,
          }),
        ),
        signal,
      )
    } else {
      // A retried attempt is billed only when its provider reported usage (as for the model call).
      const onRetry = ({ partial, error, delayMs }: RetryInfo) => {
        if (partial?.usage) charge(partial)
        const errorMessage = retryNotice(error, delayMs)
        retries.push(errorMessage)
        events.emit('error', { errorMessage, canRetry: true })
      }
      // The client retries before any output; after output, as for a turn, the engine does.
      const complete = async (sent: LLMRequest): Promise<AssistantMessage> => {
        const startedAt = settings.now()
        for (let attempt = 1; ; attempt++) {
          try {
            return await client.complete(sent, { signal, onRetry })
          } catch (error) {
            if (!ProviderError.is(error) || !afterOutput(error) || signal.aborted) throw error
            const delayMs = retryDelayMs(attempt, error.retryAfterMs, settings.retry)
            if (!retryAllowed(attempt, settings.now() - startedAt, delayMs, settings.retry)) throw error
            const info: RetryInfo = { error, delayMs, attempt }
            if (error.partial) info.partial = error.partial
            onRetry(info)
            if (!(await abortableSleep(delayMs, signal))) throw signal.reason
          }
        }
      }
      const message = await completeWithin(
        ctx,
        transcript,
        plan.summarised,
        async (request) => {
          const built = summaryRequest(request, previousSummary, summaryTokens)
          const providerOptions = summaryProviderOptions(ctx.providerOptions)
          if (providerOptions !== undefined) built.providerOptions = providerOptions
          const sent = ctx.prepare ? await ctx.prepare(built) : built
          // The hook threw (which aborted the signal) or the user interrupted: nothing is sent.
          if (sent === undefined) throw signal.reason
          return complete(sent)
        },
        charge,
      )
      // Counted whatever came of it, as an interrupted response of the task is: tokens were spent.
      charge(message)
      if (message.stopReason === 'aborted' || signal.aborted)
        return unsaved({ compacted: false, reason: 'aborted' })
      // Cut off at the output limit, the summary lost what it had not said yet: the model would
      // carry on from a truncated account of the session, so it is a failed summary.
      if (message.stopReason === 'length')
        return unsaved({ compacted: false, reason: 'failed', errorMessage: CUT_SUMMARY })
      // Ended for a reason Kode has no name for (a content filter, a refusal): what came is not the
      // account asked for, and saved it would stand in for the older part of the session.
      if (message.stopReason === undefined && message.rawStopReason !== undefined)
        return unsaved({
          compacted: false,
          reason: 'failed',
          errorMessage: unfinishedSummary(message.rawStopReason),
        })
      summary = joinText(message.parts)
    }
  } catch (error) {
    // The last attempt, failed after its provider reported usage, was billed as well.
    if (ProviderError.is(error) && error.partial?.usage) charge(error.partial)
    if (signal.aborted) return unsaved({ compacted: false, reason: 'aborted' })
    const detail = ProviderError.is(error) ? error.message : thrownText(error)
    return unsaved({ compacted: false, reason: 'failed', errorMessage: `The summary failed: ${detail}` })
  }
  if (signal.aborted) return unsaved({ compacted: false, reason: 'aborted' })
  if (typeof summary !== 'string' || summary.trim() === '')
    return unsaved({ compacted: false, reason: 'failed', errorMessage: 'The summary came back empty.' })

  const record: CompactionRecord = {
    type: 'compaction',
    id: settings.createId(),
    createdAt: settings.now(),
    summary,
    firstKeptId: '',
    tokensBefore: budget.inputTokens,
    tokensAfter: 0,
    reason,
    ...trace(),
  }
  record.firstKeptId = plan.firstKept?.id ?? record.id
  const written = estimator.message(summaryMessage(record))
  const noRoom = roomless(ctx, budget, reason, systemTokens, written)
  if (noRoom !== undefined) return unsaved({ compacted: false, reason: 'failed', errorMessage: noRoom })
  record.tokensAfter = ctx.instructionTokens + written + plan.keptTokens + systemTokens
  // At the threshold, a summary no smaller than what it replaces makes no room either: saved, the
  // next request would be as large, and the next turn would summarise the summary. (Asked for by
  // the host, the compaction is saved: it was asked for, whatever it gains.)
  if (reason === 'threshold' && record.tokensAfter >= record.tokensBefore) {
    return unsaved({
      compacted: false,
      reason: 'failed',
      errorMessage: `The summary (about ${written} tokens) leaves the request no smaller (about ${record.tokensAfter} tokens, against ${record.tokensBefore} before), so nothing was compacted.`,
    })
  }
  return { compacted: true, record }
}

/**
 * Why a summary (of `written` tokens, as the message it is sent as) makes no room, if it does not:
 * it alone takes more than what the system prompt and tool definitions leave of the input limit,
 * or, for a model whose window is unknown, it is no smaller than all but those of the request the
 * provider refused. Saved, every later request would be larger than the window, and each later
 * compaction would start from it. The model's own summary is bounded by its output budget; a
 * host's `summarize` is bounded by nothing else.
 */
function roomless(
  ctx: CompactionContext,
  budget: ContextBudget,
  reason: CompactionReason,
  systemTokens: number,
  written: number,
): string | undefined {
  const limit = budget.inputLimit
  const fixed = ctx.instructionTokens + systemTokens
  if (limit !== undefined) {
    const room = limit - fixed
    if (written <= room) return undefined
    return `The summary (about ${written} tokens) does not fit the window: the system prompt and tool definitions leave it about ${Math.max(0, room)} tokens, so nothing was compacted.`
  }
  // With no known window, the request the provider refused is the one bound there is.
  if (reason !== 'overflow' || written < budget.inputTokens - fixed) return undefined
  return `The summary (about ${written} tokens) is no smaller than the request the provider refused (about ${budget.inputTokens} tokens), so nothing was compacted.`
}

/**
 * The summary request, sent again with half the transcript (the oldest messages giving way) while
 * the provider answers that it does not fit the window, up to {@link OVERFLOW_RETRIES} times: the
 * transcript was sized by the token estimate, which undercounts some text (CJK, a tokenizer unlike
 * the estimate's), and a summary of the newer messages beats none. Each overflow its provider billed
 * is charged; the last one is thrown.
 */
async function completeWithin(
  ctx: CompactionContext,
  transcript: string,
  summarised: readonly Message[],
  send: (transcript: string) => Promise<AssistantMessage>,
  charge: (message: AssistantMessage) => void,
): Promise<AssistantMessage> {
  const estimator = ctx.settings.estimator
  let sent = transcript
  for (let attempt = 0; ; attempt++) {
    try {
      return await send(sent)
    } catch (error) {
      if (attempt === OVERFLOW_RETRIES || ctx.signal.aborted) throw error
      if (!ProviderError.is(error) || error.kind !== 'context_overflow') throw error
      const smaller = transcriptOf(summarised, Math.floor(estimator.text(sent) / 2), estimator)
      // Nothing left to leave out (one message alone, or the previous summary, is too large).
      if (smaller.length >= sent.length) throw error
      if (error.partial?.usage) charge(error.partial)
      sent = smaller
    }
  }
}

/**
 * The most tokens the kept part may take: {@link KEEP_SHARE} of the input limit, and at most half of
 * what the threshold (as {@link compactionTrigger} moves it) leaves besides the instructions and the system prompt. So the compacted request
 * lands well under the threshold, with room for the summary and new work, however low the
 * threshold or large the tool definitions; otherwise every turn would compact again.
 *
 * A provider that refused as too long a request estimated to fit shows that the estimate undercounts
 * this session (CJK text is about a token a character, not four characters): the kept part then
 * shrinks by the same ratio, or it would overflow again, and every later request with it. For a
 * model whose window is unknown, an overflow compaction keeps at most {@link KEEP_SHARE} of the
 * refused request.
 */
function keepBudget(
  ctx: CompactionContext,
  reason: CompactionReason,
  budget: ContextBudget,
  systemTokens: number,
): number {
  const limit = budget.inputLimit
  // With no known window, the request the provider refused is the one bound there is.
  if (limit === undefined)
    return reason === 'overflow' ? budget.inputTokens * KEEP_SHARE : Number.POSITIVE_INFINITY
  const trigger = compactionTrigger(ctx.compaction.threshold, limit, ctx.instructionTokens) ?? limit
  const underThreshold = trigger - ctx.instructionTokens - systemTokens
  const keep = Math.max(0, Math.min(limit * KEEP_SHARE, underThreshold / 2))
  const undercount = reason === 'overflow' && budget.inputTokens < limit ? budget.inputTokens / limit : 1
  return keep * undercount
}

/**
 * Whether the request failed after its response had begun (a connection cut mid-summary): the
 * client retries only before any output, so such a failure, when retryable, is the engine's to retry.
 */
function afterOutput(error: ProviderError): boolean {
  return error.retryable && (error.partial?.parts.length ?? 0) > 0
}

/** `promise`, or a rejection as soon as `signal` aborts, whichever comes first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    // Aborted already (the summarizer itself interrupted as it started): no abort event will come.
    if (signal.aborted) onAbort()
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
