import {
  type ErrorRecord,
  type HistoryEvent,
  joinText,
  type TaskFinishReason,
  type TaskMetadataRecord,
  type UserContentPart,
  type UserMessage,
} from '@kode/protocol'
import { AgentError } from '../errors.js'
import type { TaskOutcome } from '../outcome.js'
import { uncorrectedAnswerReason } from '../output/check-answer.js'
import { correctionSent, FinalAnswer } from '../output/final-answer.js'
import { endsPaused } from '../paused-turn.js'
import { TaskAccounting } from './accounting.js'
import type { ApprovalDecision } from './approval.js'
import { pendingCalls, publicPending } from './approval.js'
import {
  carryOn,
  checkStoppedSubAgentsFree,
  denySuperseded,
  planContinuation,
  STOPPED_SUB_AGENT_TEXT,
  settleStopped,
} from './continuation.js'
import { continuedTaskStart } from './continued-task.js'
import { endsAwaitingResponse } from './open-turn.js'
import type { TaskRuntime } from './runtime.js'
import { type CallsEnd, runTurn, type TaskState } from './turn.js'
import { type UserMode, userMessageFields } from './user-input.js'

/** How a task begins: with the user's input, or carrying a paused or unfinished task on. */
export type TaskStart =
  | {
      kind: 'input'
      parts: readonly UserContentPart[]
      mode?: UserMode | undefined
      /** The user message's id, chosen by the host (see `RunInputOptions.messageId`). */
      messageId?: string | undefined
    }
  | {
      kind: 'continue'
      approvals: readonly ApprovalDecision[] | undefined
      /** The user message whose task this carries on (see `ContinueOptions.inputId`). */
      inputId?: string | undefined
      /**
       * A sub-agent whose process died, and whose parent answered the call that ran it: its calls
       * left without a result are answered (none runs again), and the task ends `error`.
       */
      settleOnly?: boolean | undefined
    }

/**
 * One task: the user's input (or the continuation of a task that paused for approval or whose
 * process died), then turns until a response calls no tools and is not a paused turn (and no
 * steering message is waiting), the user interrupts, the provider fails for good, or `maxTurns` is reached. Ends
 * with the task's accounting (`task_metadata`, persisted) and `task_finish`. Provider failures,
 * host failures (`rt.hostFailure()`) and interrupts end the task normally; only a failure that
 * stops persisting (the store) is thrown.
 */
export async function runTask(rt: TaskRuntime, start: TaskStart): Promise<TaskOutcome> {
  // The session's writer is held for the task, so no other writer interleaves with its turns. A
  // continuation carries on what the history holds: a session that does not exist is not made.
  await rt.journal.open(start.kind === 'continue' ? undefined : rt.sessionInit)
  let outcome: TaskOutcome
  try {
    outcome = await runOpenTask(rt, start)
  } catch (error) {
    await rt.journal.close().catch(() => {})
    throw error
  }
  await rt.journal.close()
  return outcome
}

async function runOpenTask(rt: TaskRuntime, start: TaskStart): Promise<TaskOutcome> {
  const { events, journal, signal, settings } = rt
  const settleOnly = start.kind === 'continue' && start.settleOnly === true
  // Decisions that do not fit the history are the host's mistake: refused before the task starts.
  const continuation =
    start.kind === 'continue' && !settleOnly
      ? planContinuation(journal.history, start.approvals, rt.sessionId)
      : undefined
  if (start.kind === 'input' && start.messageId !== undefined) checkFreeId(journal.history, start.messageId)
  if (start.kind === 'continue' && start.inputId !== undefined) checkInputId(journal.history, start.inputId)
  // A settling sub-agent was checked with its parent.
  if (!settleOnly) await checkStoppedSubAgentsFree(rt)
  events.emit('task_start', { subAgentState: rt.subAgentState })
  // A process that died inside a turn awaiting its response (right after a threshold compaction,
  // say) left that turn open: `continue` carries it on with the response, as the replay of the
  // history it leaves shows it; anything else (a message first) closes it.
  let openTurn = endsAwaitingResponse(journal.history)
  const closeOpenTurn = () => {
    if (!openTurn) return
    openTurn = false
    events.resumeTurn([])
    events.emit('turn_end', {})
  }
  if (continuation?.kind !== 'unfinished') closeOpenTurn()
  const state: TaskState = {
    accounting: new TaskAccounting(rt.sessionId, settings.now, rt.subAgentState?.name),
    lastText: '',
  }
  await persistSystemPrompt(rt)
  let carried: CallsEnd = 'done'
  if (settleOnly) await settleStopped(rt, state)
  else if (start.kind === 'input') {
    await denySuperseded(rt, state)
    await settleStopped(rt, state)
    await deliverUserMessage(rt, start.parts, start.mode, start.messageId)
  } else if (continuation) carried = await carryOn(rt, state, continuation)
  const interrupted = carried === 'interrupted'
  // A paused turn a dead process left is carried on before any steered message (see the loop).
  if (carried === 'done' && !endsPaused(journal.history)) await deliverSteering(rt, closeOpenTurn)

  // A task carried on (after its process died, or after it paused) may have had its one corrective
  // turn already: among its own records, not an earlier task's (looked for only when the task asks
  // for a structured answer: a long history is sliced and read for it).
  const answer = rt.output
    ? new FinalAnswer(
        rt.output,
        start.kind === 'continue' &&
          correctionSent(journal.history.slice(continuedTaskStart(journal.history))),
      )
    : undefined
  let reason: TaskFinishReason
  let errorMessage: string | undefined
  for (let turns = 0; ; turns++) {
    if (settleOnly) {
      errorMessage = STOPPED_SUB_AGENT_TEXT
      await persistError(rt, errorMessage)
      reason = 'error'
      break
    }
    if (interrupted) {
      reason = 'aborted'
      break
    }
    if (carried === 'suspended') {
      // A sub-agent that carried on paused again for approval.
      reason = 'awaiting_approval'
      break
    }
    const failure = rt.hostFailure()
    // A task that ends before its first turn does not carry the dead process's turn on.
    if (failure || signal.aborted) closeOpenTurn()
    if (failure) {
      errorMessage = failure.message
      await persistError(rt, errorMessage, failure.code)
      reason = 'error'
      break
    }
    if (signal.aborted) {
      // Interrupted between turns: no message carries it, so a record does.
      await journal.persist({
        type: 'interrupt',
        id: settings.createId(),
        createdAt: settings.now(),
        turn: 'none',
      })
      events.emit('interrupt', {})
      reason = 'aborted'
      break
    }
    if (turns === settings.maxTurns) {
      errorMessage = maxTurnsMessage(turns)
      await persistError(rt, errorMessage)
      reason = 'max_turns'
      break
    }
    const end = await runTurn(rt, state, openTurn)
    openTurn = false
    if (end === 'interrupted') {
      reason = 'aborted'
      break
    }
    if (end === 'awaiting_approval') {
      reason = 'awaiting_approval'
      break
    }
    if (typeof end === 'object') {
      errorMessage = end.failed
      reason = 'error'
      break
    }
    // A paused turn goes on before anything else: the provider carries it on from a history that
    // ends with it, so a steered message waits for the turn's end.
    if (end === 'paused') continue
    const steered = !signal.aborted && (await deliverSteering(rt))
    if (end === 'final' && !steered) {
      const verdict = answer?.judge(state.lastText, journal.history)
      if (verdict?.kind === 'correct') {
        if (turns + 1 < settings.maxTurns) {
          await deliverUserMessage(rt, [{ type: 'text', text: verdict.text }])
          continue
        }
        // No turn is left for the correction: the task stops at its limit, as one that would call
        // tools again does, and says why the answer failed (the code says so to a history reader).
        // No corrective message is sent: nothing would answer it.
        errorMessage = maxTurnsMessage(turns + 1, uncorrectedAnswerReason(verdict.problems))
        await persistError(rt, errorMessage, 'structured_output_invalid')
        reason = 'max_turns'
        break
      }
      if (verdict?.kind === 'invalid') {
        errorMessage = verdict.message
        await persistError(rt, errorMessage, 'structured_output_invalid')
        reason = 'structured_output_invalid'
        break
      }
      reason = 'completed'
      break
    }
  }

  const metadata = state.accounting.summary()
  const ended: TaskMetadataRecord = {
    type: 'task_metadata',
    id: settings.createId(),
    createdAt: settings.now(),
    metadata,
  }
  const inputId = start.kind === 'input' ? start.messageId : start.inputId
  if (inputId !== undefined) ended.inputId = inputId
  ended.reason = reason
  await journal.persist(ended)
  events.emit('task_metadata', { metadata })
  const hasStructuredOutput = answer?.accepted === true
  events.emit('task_finish', { taskResult: state.lastText, hasStructuredOutput, reason })
  const outcome: TaskOutcome = { sessionId: rt.sessionId, reason, text: state.lastText, metadata }
  if (hasStructuredOutput) outcome.output = answer!.value
  if (errorMessage !== undefined) outcome.errorMessage = errorMessage
  if (reason === 'awaiting_approval') outcome.pendingApprovals = publicPending(pendingCalls(journal.history))
  return outcome
}

/** Why a task that ran `turns` turns stopped at `maxTurns`, and what was left undone when known. */
function maxTurnsMessage(turns: number, detail?: string): string {
  const stopped = `The task stopped after ${turns} turns (maxTurns) before the model finished`
  return detail === undefined ? `${stopped}.` : `${stopped}: ${detail}`
}

/** An `error` record that ends the task between turns, and its `error` event. */
async function persistError(rt: TaskRuntime, message: string, code?: string): Promise<void> {
  const { createId, now } = rt.settings
  const record: ErrorRecord = { type: 'error', id: createId(), createdAt: now(), message, canRetry: false }
  if (code !== undefined) record.code = code
  // Replay shows it between turns too, as here (after the last turn's `turn_end`).
  record.turn = 'none'
  await rt.journal.persist(record)
  rt.events.emit('error', { errorMessage: message, canRetry: false })
}

/** Persists the system prompt when it differs from the one the session last recorded. */
async function persistSystemPrompt(rt: TaskRuntime): Promise<void> {
  if (rt.system === undefined) return
  const history = rt.journal.history
  for (let i = history.length - 1; i >= 0; i--) {
    const record = history[i]!
    if ('role' in record && record.role === 'system') {
      if (joinText(record.parts) === rt.system) return
      break
    }
  }
  const { createId, now } = rt.settings
  await rt.journal.persist({
    role: 'system',
    id: createId(),
    createdAt: now(),
    parts: [{ type: 'text', text: rt.system }],
  })
}

async function deliverUserMessage(
  rt: TaskRuntime,
  parts: readonly UserContentPart[],
  mode?: UserMode,
  id?: string,
): Promise<void> {
  const message: UserMessage = {
    role: 'user',
    id: id ?? rt.settings.createId(),
    createdAt: rt.settings.now(),
    parts: [...parts],
    ...mode,
  }
  await rt.journal.persist(message)
  rt.events.emit('user_message', userMessageFields(message))
}

/**
 * Refuses a user message id the session already holds: the host chose it to find this task's
 * records again, and two records under one id would make that ambiguous.
 */
function checkFreeId(history: readonly HistoryEvent[], id: string): void {
  if (history.some((record) => record.id === id)) {
    throw new AgentError('invalid_options', `messageId ${id} is already the id of a record of this session`)
  }
}

/**
 * Refuses to name an input the session does not hold: the continued task's end would then claim a
 * task that never began here.
 */
function checkInputId(history: readonly HistoryEvent[], id: string): void {
  if (!history.some((record) => 'role' in record && record.role === 'user' && record.id === id)) {
    throw new AgentError('invalid_options', `inputId ${id} is not the id of a user message of this session`)
  }
}

/**
 * Delivers the messages the host queued with `steer`; true when there were any. `before` runs
 * first when there are (it closes a turn a message must not land in). When the store fails, the
 * messages after the one being written go back to the queue, for the next run.
 */
async function deliverSteering(rt: TaskRuntime, before?: () => void): Promise<boolean> {
  const queued = rt.takeSteering()
  if (queued.length > 0) before?.()
  for (let i = 0; i < queued.length; i++) {
    try {
      await deliverUserMessage(rt, queued[i]!)
    } catch (error) {
      rt.returnSteering(queued.slice(i + 1))
      throw error
    }
  }
  return queued.length > 0
}
