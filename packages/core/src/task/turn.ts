import {
  type AssistantMessage,
  citationsOf,
  type ErrorRecord,
  joinText,
  joinThinking,
  serverToolsOf,
  type ToolCallPart,
  toolCallsOf,
} from '@kode/protocol'
import type { LLMClient, LLMRequest, ProviderError } from '@kode/providers'
import { recordBytesOver } from '@kode/session'
import { type Billed, billedBy } from '../billed.js'
import { statusAndCode } from '../error-fields.js'
import { outputInstructions } from '../output/output-spec.js'
import { isPausedTurn } from '../paused-turn.js'
import { withModelSettings } from '../settings/model-settings.js'
import type { ToolOutcome } from '../tools/tool-outcome.js'
import type { ToolSet } from '../tools/tool-set.js'
import type { TaskAccounting } from './accounting.js'
import { withActions } from './actions.js'
import {
  announceApprovals,
  approvalRequests,
  callsNeedingApproval,
  recordSubAgentApprovals,
} from './approval.js'
import { callModelWithinBudget } from './budgeted-call.js'
import { CallSubAgents, type ChildResume } from './call-sub-agents.js'
import { callModel, type ModelResult } from './model-call.js'
import { hookedRequest } from './model-hook.js'
import type { HostFailure, TaskRuntime } from './runtime.js'
import { runToolBatch } from './tool-batch.js'

/** What a task carries from turn to turn. */
export interface TaskState {
  accounting: TaskAccounting
  /** The answer of the task's latest assistant message (`answerText`): `task_finish.taskResult`. */
  lastText: string
}

/**
 * How a turn ended: the model called tools (go on), the provider paused its turn (go on with the
 * history as it is: see `isPausedTurn`), answered (stop), was interrupted, failed, or some of its
 * calls wait for the user's approval (the task pauses).
 */
export type TurnEnd =
  | 'tool_calls'
  | 'paused'
  | 'final'
  | 'interrupted'
  | 'awaiting_approval'
  | { failed: string }

/** Why a turn failed: a provider error that retries did not cure, or a host failure. */
interface TurnFailure {
  message: string
  /** What the response had produced, if anything. */
  partial: AssistantMessage | undefined
  /** The response failed at the API (`isApiError` on the kept text). */
  apiError: boolean
  status?: number
  code?: string
}

/**
 * One turn: one model response and its tool calls, between `turn_start` and `turn_end` (`resumed`:
 * the turn a process that died opened, whose `turn_start` is out already). The
 * response's message, with the actions the history formatter finds in its text appended as tool
 * calls, is persisted before `response_complete` announces it; an interrupted one is
 * persisted with `stopReason: 'aborted'` (or, with no output at all, an `interrupt` record), its
 * calls answered `aborted`, and `interrupt` is emitted before `turn_end`. When the signal aborted
 * because the host failed (`rt.hostFailure()`), the turn fails instead, as for a provider failure.
 */
export async function runTurn(rt: TaskRuntime, state: TaskState, resumed = false): Promise<TurnEnd> {
  // A turn a process that died had opened (see `endsAwaitingResponse`) goes on without a second start.
  if (resumed) rt.events.resumeTurn([])
  else rt.events.emit('turn_start', {})
  state.accounting.countTurn()
  const client = rt.client()
  // A beforeModelCall hook that throws aborts the task's signal as a host failure; the call then
  // reads as aborted and ends below as that failure.
  const send = async (request: LLMRequest): Promise<ModelResult> => {
    const hooked = await hookedRequest(rt, request)
    return hooked === undefined
      ? { kind: 'aborted', partial: undefined }
      : callModel(rt, client, hooked, state.accounting)
  }
  // The tools of the request the response answers: its calls are checked for approval and run with
  // these, whatever `setTools` does meanwhile (it applies from the next model call on).
  let offered = rt.tools
  const request = () => {
    offered = rt.tools
    return nextRequest(rt)
  }
  const result = await callModelWithinBudget(rt, client, request, state.accounting, send)
  let end: TurnEnd
  switch (result.kind) {
    case 'complete':
      end = await completed(rt, state, client, result.message, offered)
      break
    case 'aborted': {
      const failure = rt.hostFailure()
      end = failure
        ? await failed(rt, state, hostTurnFailure(failure, result.partial))
        : await interrupted(rt, state, result.partial)
      break
    }
    case 'failed':
      end = await failed(rt, state, providerFailure(result.error))
      break
    default: {
      const unknown: never = result
      throw new Error(`unknown model result ${JSON.stringify(unknown)}`)
    }
  }
  rt.events.emit('turn_end', {})
  return end
}

/**
 * The history as the formatter presents it, with the formatter's tools and system text, the
 * structured output asked for, and the task's model settings.
 */
function nextRequest(rt: TaskRuntime): LLMRequest {
  const { tools, system } = rt.instructions
  const request: LLMRequest = { messages: rt.journal.providerMessages(), tools }
  // A formatter that offers the model a tool in its text alone (ReAct, CodeAct's code tool) needs
  // every response free to state an action: the schema goes in the instructions, not in a native
  // response format.
  const inText = rt.output !== undefined && offersInText(rt, tools)
  const texts = [system, inText ? outputInstructions(rt.output!) : undefined].filter((t) => t !== undefined)
  if (texts.length > 0) request.system = texts.join('\n\n')
  if (rt.output && !inText) request.responseFormat = rt.output.format
  return withModelSettings(request, rt.modelSettings)
}

/** Whether the formatter offers one of the task's tools in its text alone, not as a native tool. */
function offersInText(rt: TaskRuntime, native: LLMRequest['tools']): boolean {
  const declared = new Set((native ?? []).map((tool) => tool.name))
  return (rt.tools.definitions ?? []).some((tool) => !declared.has(tool.name))
}

async function completed(
  rt: TaskRuntime,
  state: TaskState,
  client: LLMClient,
  response: AssistantMessage,
  tools: ToolSet,
): Promise<TurnEnd> {
  const { events } = rt
  const message = withUniqueCallIds(withActions(rt.formatter, response), rt.journal.callIds)
  const maxRecordBytes = rt.journal.store.maxRecordBytes
  const bytes = recordBytesOver(message, maxRecordBytes)
  if (bytes > 0) {
    // The store would refuse it and fail the task mid-turn: the task ends here instead, with an
    // error naming both sizes, and keeps only what the call billed (its calls never run).
    const text = `The model's response is ${bytes} bytes as a history record, over the session store's limit of ${maxRecordBytes} bytes (maxRecordBytes); it was not kept.`
    const billed = { ...message, parts: [] }
    return failed(rt, state, { message: text, partial: billed, apiError: false, code: 'response_too_large' })
  }
  const calls = toolCallsOf(message)
  // Asked before the response is written, so that it and the approval requests of its calls are
  // one append: a reader of the session never sees calls that wait without what holds them (its
  // replay would show them as calls that run, then take that back).
  const waiting = calls.length === 0 ? new Set<string>() : await callsNeedingApproval(rt, calls, tools)
  const held = calls.filter((call) => waiting.has(call.id))
  await rt.journal.persistAll([message, ...approvalRequests(rt, held, message.responseId)])
  state.accounting.addResponse(message)
  state.lastText = rt.formatter.answerText(message)
  const { responseId, usage } = message
  events.emit('response_complete', {
    responseId,
    content: joinText(message.parts),
    thinkingText: joinThinking(message.parts),
    serverTools: serverToolsOf(message.parts),
    citations: citationsOf(message.parts),
  })
  if (usage) {
    events.emit('usage', { responseId, usage, costUsd: message.costUsd })
    const contextWindow = client.modelInfo?.contextWindow
    if (contextWindow && (usage.inputTokens !== undefined || usage.outputTokens !== undefined)) {
      const contextTokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)
      events.emit('context_usage', {
        contextPercent: (contextTokens / contextWindow) * 100,
        contextTokens,
        contextWindow,
      })
    }
  }
  if (calls.length === 0) return isPausedTurn(message) ? 'paused' : 'final'
  announceApprovals(rt, held, responseId)
  // The waiting calls are held in the batch: interrupted (or failed) before the user could decide,
  // they are answered in call order like any call that did not run, so nothing stays pending.
  const ran = await runCalls(rt, state, calls, responseId, rt.signal, { held: waiting, tools })
  const failure = rt.hostFailure()
  if (failure) return failed(rt, state, hostTurnFailure(failure, undefined), true)
  if (ran === 'interrupted') {
    events.emit('interrupt', {})
    return 'interrupted'
  }
  return ran === 'suspended' ? 'awaiting_approval' : 'tool_calls'
}

async function interrupted(
  rt: TaskRuntime,
  state: TaskState,
  partial: AssistantMessage | undefined,
): Promise<TurnEnd> {
  const message = partial && partial.parts.length > 0 ? abortedMessage(rt, partial) : undefined
  // What the store cannot keep is not kept: the turn reads as one interrupted before any output.
  if (message && recordBytesOver(message, rt.journal.store.maxRecordBytes) === 0) {
    await rt.journal.persist(message)
    state.accounting.addResponse(message)
    state.lastText = rt.formatter.answerText(message)
    // Counted in the task's usage, so announced like a finished response's (replay shows it too).
    const { responseId, usage } = message
    if (usage) rt.events.emit('usage', { responseId, usage, costUsd: message.costUsd })
    const calls = toolCallsOf(message)
    // Never run: every call of an interrupted response is answered `aborted`.
    if (calls.length > 0) await runCalls(rt, state, calls, message.responseId, AbortSignal.abort())
  } else {
    // In this turn, which has no response: replay opens one for it too.
    const { createId, now } = rt.settings
    const billed = unsavedCall(partial)
    await rt.journal.persist({ type: 'interrupt', id: createId(), createdAt: now(), turn: 'own', ...billed })
    // Counted and announced as an interrupted response's usage is (replay shows it from the record).
    if (billed.usage) {
      state.accounting.addResponse(partial!)
      rt.events.emit('usage', { usage: billed.usage, costUsd: billed.costUsd })
    }
  }
  rt.events.emit('interrupt', {})
  return 'interrupted'
}

/** An interrupted response as it is kept: `stopReason: 'aborted'`, its actions as calls. */
function abortedMessage(rt: TaskRuntime, partial: AssistantMessage): AssistantMessage {
  const { isApiError: _error, errorMessage: _message, ...rest } = partial
  return withUniqueCallIds(withActions(rt.formatter, { ...rest, stopReason: 'aborted' }), rt.journal.callIds)
}

/**
 * The message with each tool call id the session already used, or the message repeats, made unique
 * (`<id>_2`, `<id>_3`...). A model may send two calls with one id, and some servers number their
 * calls afresh in every response (`call_0`): each call must still get exactly one result the
 * provider can match to it, and some providers refuse a request whose history repeats an id.
 */
function withUniqueCallIds(message: AssistantMessage, used: ReadonlySet<string>): AssistantMessage {
  const ids = new Set<string>()
  let repeated = false
  for (const part of message.parts) {
    if (part.type !== 'tool_call') continue
    if (ids.has(part.id) || used.has(part.id)) repeated = true
    ids.add(part.id)
  }
  if (!repeated) return message
  const taken = (id: string) => ids.has(id) || used.has(id)
  const kept = new Set<string>()
  const parts = message.parts.map((part) => {
    if (part.type !== 'tool_call') return part
    if (!kept.has(part.id) && !used.has(part.id)) {
      kept.add(part.id)
      return part
    }
    let n = 2
    while (taken(`${part.id}_${n}`)) n++
    const id = `${part.id}_${n}`
    ids.add(id)
    kept.add(id)
    return { ...part, id }
  })
  return { ...message, parts }
}

/**
 * A failure that ends the task: a provider failure that retries did not cure, or a host failure.
 * The visible text the response had streamed is kept as an assistant message with
 * `stopReason: 'error'` (marked `isApiError` when the API failed; its thinking and tool calls are
 * dropped: the calls never ran and a cut signature cannot be sent back); then the `error` record.
 */
async function failed(
  rt: TaskRuntime,
  state: TaskState,
  failure: TurnFailure,
  /** The turn's response was persisted already (a host failure while its calls ran). */
  afterResponse = false,
): Promise<TurnEnd> {
  const { settings, journal } = rt
  const { partial } = failure
  let text = partial?.parts.filter((part) => part.type === 'text' && part.text !== '') ?? []
  let message: AssistantMessage | undefined
  if (partial && text.length > 0) {
    const { isApiError: _apiError, ...rest } = partial
    message = { ...rest, parts: text, stopReason: 'error', errorMessage: failure.message }
    if (failure.apiError) message.isApiError = true
    // Text the store cannot keep is not kept: the error stands alone, as after no output.
    if (recordBytesOver(message, journal.store.maxRecordBytes) > 0) {
      message = undefined
      text = []
    }
  }
  if (message) {
    await journal.persist(message)
    state.accounting.addResponse(message)
    state.lastText = rt.formatter.answerText(message)
  }
  const record: ErrorRecord = {
    type: 'error',
    id: settings.createId(),
    createdAt: settings.now(),
    message: failure.message,
    canRetry: false,
    ...statusAndCode(failure),
  }
  // Without a kept message the error is this turn's only record: replay opens a turn for it, as here.
  if (!afterResponse && (!partial || text.length === 0)) {
    record.turn = 'own'
    // What the provider billed before failing is counted, so the record keeps it. No `usage` event,
    // as for a failed response that kept text.
    Object.assign(record, unsavedCall(partial))
    if (record.usage) state.accounting.addResponse(partial!)
  }
  await journal.persist(record)
  rt.events.emit('error', { errorMessage: failure.message, canRetry: false })
  return { failed: failure.message }
}

/**
 * The usage, cost and model of a call that left no message (failed or interrupted before any
 * text), for its `error` or `interrupt` record: empty when the provider reported no usage.
 */
function unsavedCall(partial: AssistantMessage | undefined): Billed {
  return partial?.usage === undefined ? {} : billedBy(partial)
}

function hostTurnFailure(failure: HostFailure, partial: AssistantMessage | undefined): TurnFailure {
  const turnFailure: TurnFailure = { message: failure.message, partial, apiError: false }
  if (failure.code !== undefined) turnFailure.code = failure.code
  return turnFailure
}

function providerFailure(error: ProviderError): TurnFailure {
  return { message: error.message, partial: error.partial, apiError: true, ...statusAndCode(error) }
}

/** What a batch of calls knows before it runs. */
export interface CallsOptions {
  /** Outcomes decided before the batch (denied approvals), by call id: these calls do not run. */
  decided?: ReadonlyMap<string, ToolOutcome>
  /**
   * Calls that run again to carry on the sub-agents they paused for approval, by call id: their
   * `runSubAgent` calls continue these sessions, in order, instead of starting new ones.
   */
  resume?: ReadonlyMap<string, readonly ChildResume[]>
  /**
   * What a sub-agent of `resume` ends saying when its call does not carry it on (default: that
   * the call ended without it).
   */
  notCarriedOn?: string
  /** Calls that run again after their process died (`ctx.resumed`): their tool says `onResume: 'rerun'`. */
  resumed?: ReadonlySet<string>
  /** What a call gets when the batch stops before its tool is called (see `ToolBatch.notRun`). */
  notRun?: ReadonlyMap<string, ToolOutcome>
  /** Calls waiting for approval, which do not run (see `ToolBatch.held`). */
  held?: ReadonlySet<string>
  /** Calls whose `tool_call` is already out (see `ToolBatch.announced`). */
  announced?: ReadonlySet<string>
  /** The tools the calls run with (see `ToolBatch.tools`). */
  tools?: ToolSet
}

/**
 * How a batch of calls ended: all answered, interrupted by the user, or some calls suspended
 * because a sub-agent they ran waits for approval (recorded in this session's history).
 */
export type CallsEnd = 'done' | 'interrupted' | 'suspended'

/**
 * Runs a response's calls; sub-agents they start are awaited, so none outlives its turn. A call
 * whose sub-agent ends `awaiting_approval` is suspended: it gets no result, and the sub-agent's
 * pending calls are recorded here (`approval_request` with the sub-agent's session), so this
 * task pauses too and `agent.continue` routes the decisions back through the same call.
 */
export async function runCalls(
  rt: TaskRuntime,
  state: TaskState,
  calls: readonly ToolCallPart[],
  responseId: string | undefined,
  signal: AbortSignal,
  options: CallsOptions = {},
): Promise<CallsEnd> {
  const subAgents = new CallSubAgents(rt, options.resume, options.notCarriedOn)
  const end = await runToolBatch({
    rt,
    calls,
    responseId,
    signal,
    ...(options.decided ? { decided: options.decided } : {}),
    ...(options.notRun ? { notRun: options.notRun } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.announced ? { announced: options.announced } : {}),
    ...(options.held ? { held: options.held } : {}),
    suspended: (toolCallId) => subAgents.suspends(toolCallId),
    mayBeSuspended: (toolCallId) => subAgents.ran(toolCallId),
    context: (call, callSignal, progress) => ({
      // Made when the tool first reads it (most never do).
      get signal() {
        return callSignal.signal
      },
      toolCallId: call.id,
      toolName: call.name,
      sessionId: rt.sessionId,
      responseId,
      resumed: options.resumed?.has(call.id) ?? false,
      // Once the call has ended (returned, threw or timed out), what it reports is no longer its
      // progress, though its result may still wait (for afterToolCall, for its sub-agents).
      progress: (message) => {
        if (!callSignal.ended) progress(message)
      },
      runSubAgent: (spec, input) => subAgents.start(call.id, callSignal, spec, input),
    }),
    finish: (toolCallId, outcome, answered) => subAgents.link(toolCallId, outcome, answered),
  })
  // An interrupt settles the parent's calls at once; the children still close their sessions
  // (a call's result waited for its own: `CallSubAgents.link`). Their accounting joins the task's
  // in the order they were started, not the order they ended.
  for (const outcome of await subAgents.ended()) state.accounting.addSubAgent(outcome.metadata)
  for (const call of end.suspended) {
    for (const child of subAgents.paused.get(call.id) ?? []) {
      const subAgentCall = { toolCallId: call.id, sessionId: child.sessionId }
      await recordSubAgentApprovals(rt, subAgentCall, child.pending, responseId)
    }
  }
  if (end.interrupted) return 'interrupted'
  return end.suspended.length > 0 ? 'suspended' : 'done'
}
