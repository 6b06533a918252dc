import { type ToolCallPart, toolResultEventStatus } from '@kode/protocol'
import { INCOMPLETE_CALL_TEXT } from '@kode/protocol/helpers'
import { runHookedCall } from '../hooks/tool-hooks.js'
import type { CallSignal } from '../tools/call-signal.js'
import type { Tool, ToolContext } from '../tools/define-tool.js'
import { executeToolCall } from '../tools/execute-tool-call.js'
import {
  abortedOutcome,
  errorOutcome,
  hostFailureOutcome,
  resultMessage,
  type ToolOutcome,
} from '../tools/tool-outcome.js'
import type { ToolSet } from '../tools/tool-set.js'
import { Gate } from './call-gate.js'
import type { TaskRuntime } from './runtime.js'

/** The tool calls of one response, and how to build each call's context. */
export interface ToolBatch {
  rt: TaskRuntime
  calls: readonly ToolCallPart[]
  /**
   * The tools the calls run with: those the response was offered, which its approvals were asked
   * of. Default: the task's tools as the batch starts.
   */
  tools?: ToolSet
  responseId: string | undefined
  /** Aborting it settles every call without a result as `aborted`. Usually the task's signal. */
  signal: AbortSignal
  context(call: ToolCallPart, signal: CallSignal, progress: (message: string) => void): ToolContext
  /** Outcomes decided before the batch (denied approvals), by call id: these calls do not run. */
  decided?: ReadonlyMap<string, ToolOutcome>
  /**
   * What a call gets, by call id, when the batch stops before its tool is called, instead of the
   * interrupt's or the failure's "before it ran": a call a dead process left may have run there.
   */
  notRun?: ReadonlyMap<string, ToolOutcome>
  /**
   * Whether a call that returned is suspended instead (a sub-agent it ran waits for approval):
   * it gets no result now, and runs again when the task continues.
   */
  suspended?: (toolCallId: string) => boolean
  /**
   * Calls waiting for the user's approval: they do not run. An interrupt answers them like any
   * call (`aborted`), unless it comes once the turn's last result is out; otherwise, once the other
   * calls have ended, they are suspended (no result).
   */
  held?: ReadonlySet<string>
  /**
   * Whether a call that has not settled yet may still be suspended: it ran a sub-agent. The result
   * before it waits to learn whether it is the last of the turn.
   */
  mayBeSuspended?: (toolCallId: string) => boolean
  /**
   * Calls whose `tool_call` is already out (a dead process announced them; the session's replay
   * shows them): they are not announced again, so a watcher sees each call once.
   */
  announced?: ReadonlySet<string>
  /**
   * The call's outcome as its result will say it, once what the call started has ended (its
   * sub-agents, which the result links: see `runCalls`). Default: the outcome itself. A call that
   * ran is finished before `afterToolCall` sees its result, and again before the result is
   * recorded (an outcome linked already stays as it is). `answered`: the call gets its result now
   * (it is not suspended), so a sub-agent of it that paused as the task stopped is settled, since
   * nothing will carry it on.
   */
  finish?: (toolCallId: string, outcome: ToolOutcome, answered?: boolean) => Promise<ToolOutcome>
}

/** How a batch ended: whether the user interrupted it, and the calls it suspended (in call order). */
export interface BatchEnd {
  interrupted: boolean
  suspended: ToolCallPart[]
}

/**
 * Runs the tool calls of one response. Calls start in order, concurrently up to
 * `toolConcurrency`; a tool with `concurrent: false` waits for the running calls and runs alone.
 * `tool_call` is emitted as a call starts. Results are persisted and emitted strictly in call
 * order (a finished call waits for the ones before it), the last with `isLastInTurn` (the last
 * that gets a result now: see `lastResult`). On an interrupt every call without a result gets an
 * `aborted` one at once, without waiting for the tool (a tool that ignores its signal cannot hold
 * the task; `ToolBatch.finish` may still wait for what the engine itself runs, a sub-agent); when
 * the abort is a host failure (`rt.hostFailure()`), those results are `error`s instead. A
 * suspended call (see `ToolBatch.suspended`) gets no result, nor does a held one (`ToolBatch.held`)
 * unless interrupted before the turn's last result is out (see `BatchProgress`). Resolves with whether any result is `aborted` (the user interrupted the
 * batch) and the suspended calls.
 */
export async function runToolBatch(batch: ToolBatch): Promise<BatchEnd> {
  const { rt, calls, signal } = batch
  const slots = calls.map(() => new Slot())
  const end: BatchProgress = { interrupted: false, suspended: [], closed: false }
  const started = calls.map(() => false)
  const gate = new Gate(rt.settings.toolConcurrency)
  // A call stopped with its `notRun` outcome (an `error`) was interrupted all the same.
  let stoppedNotRun = false
  const onAbort = () => {
    // The turn's last result is out: the calls left wait (see `emitResults`), and nothing runs.
    if (end.closed) return
    const failure = rt.hostFailure()
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!
      // An outcome known before the batch (a denial, a dead process's "may or may not have run")
      // stays true whatever stops the batch: read as an interrupt, the model would take a denied
      // call for one it may retry, or a call that may have run for one that never did.
      const decided = batch.decided?.get(calls[i]!.id)
      if (decided) {
        slot.settle(decided)
        continue
      }
      const stage = slot.finished ? 'finished' : slot.running ? 'running' : 'pending'
      const notRun = stage === 'pending' ? batch.notRun?.get(calls[i]!.id) : undefined
      if (notRun && !failure && !slot.settled) stoppedNotRun = true
      slot.settle(
        notRun ??
          (failure
            ? hostFailureOutcome(stage, failure.message)
            : abortedOutcome(started[i]!, stage === 'finished')),
      )
    }
    gate.wake()
  }
  // The task's own signal is listened to through the task's one listener (cheaper per turn).
  const aborts = signal === rt.signal ? rt.aborts : undefined
  if (signal.aborted) onAbort()
  else if (aborts) aborts.add(onAbort)
  else signal.addEventListener('abort', onAbort, { once: true })

  let startFailure: { error: unknown } | undefined
  const starting = startCalls(batch, slots, started, gate).catch((error: unknown) => {
    // A bug, not a tool failure: end the batch, then rethrow below.
    startFailure = { error }
    for (const slot of slots) slot.settle(errorOutcome('The engine failed before this tool call ran.'))
  })
  try {
    await emitResults(batch, slots, started, end)
    await starting
    if (startFailure) throw startFailure.error
    if (stoppedNotRun) end.interrupted = true
    return { interrupted: end.interrupted, suspended: end.suspended }
  } catch (error) {
    // Persisting failed: start nothing more (the task's abort stops what runs).
    gate.halt()
    throw error
  } finally {
    if (aborts) aborts.delete(onAbort)
    else signal.removeEventListener('abort', onAbort)
  }
}

async function startCalls(batch: ToolBatch, slots: Slot[], started: boolean[], gate: Gate): Promise<void> {
  const { rt, calls, signal, responseId } = batch
  const { events, settings } = rt
  const stopped = () => signal.aborted || gate.halted
  // The tools the response was answered with: `setTools` while the batch runs applies from the next
  // model call on, not to the calls of this response that have not started yet.
  const tools = batch.tools ?? rt.tools
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!
    const slot = slots[i]!
    if (batch.held?.has(call.id)) continue
    const decided = batch.decided?.get(call.id)
    const plan: CallPlan = decided ? { tool: undefined, outcome: decided } : planCall(call, tools)
    const exclusive = plan.tool !== undefined && !plan.tool.concurrent
    while (!stopped() && !gate.admits(exclusive)) await gate.changed()
    if (stopped()) return
    started[i] = true
    announce(batch, call)
    // A listener may have interrupted the task on that very event.
    if (stopped()) return
    if (plan.tool === undefined) {
      slot.settle(plan.outcome)
      continue
    }
    const tool = plan.tool
    gate.enter(exclusive)
    // Progress is persisted (a `tool_progress` record) before it is announced, and before the
    // call's result; once the call has a result, it is ignored.
    const progress = (reported: string) => {
      if (slot.settled) return
      // A tool may report anything; a record holds text, and one that is not must not fail the task.
      const message = progressText(reported)
      if (message === undefined) return
      const siblingToolCallIds = siblingsOf(calls, call)
      const record = {
        type: 'tool_progress' as const,
        id: settings.createId(),
        createdAt: settings.now(),
        toolCallId: call.id,
        toolName: call.name,
        message,
        siblingToolCallIds,
        ...(responseId !== undefined ? { responseId } : {}),
      }
      slot.progress = slot.progress
        .then(() => rt.journal.persist(record))
        .then(() => {
          // Reported before an interrupt, persisted after it: the calls the interrupt left unstarted
          // are announced before this first record after it, as before a result (see `announceUnstarted`).
          if (signal.aborted) announceStopped(batch, started, 0)
          events.emit('tool_progress', {
            responseId,
            toolCallId: call.id,
            toolName: call.name,
            message,
            siblingToolCallIds,
          })
        })
        .catch((error: unknown) => {
          slot.progressFailure ??= { error }
        })
    }
    const execute = async (args: unknown): Promise<ToolOutcome> => {
      // Interrupted while `beforeToolCall` ran: the call is answered already and must not run.
      if (signal.aborted) return abortedOutcome(true)
      slot.running = true
      const outcome = await executeToolCall({
        tool,
        call,
        args,
        taskSignal: signal,
        timeoutMs: tool.timeoutMs ?? settings.toolTimeoutMs,
        formatToolError: settings.formatToolError,
        context: (callSignal) => batch.context(call, callSignal, progress),
      })
      // Finished here, before `afterToolCall`, so the hook sees the result as it will be recorded
      // (the sub-agents it links). `emitResults` finishes it again: a no-op for a linked result, and
      // what links a replacement that has no UI extra of its own.
      const finished = batch.finish ? await batch.finish(call.id, outcome) : outcome
      slot.finished = true
      return finished
    }
    const suspended = () => batch.suspended?.(call.id) === true
    void runHookedCall(rt, call, tool, plan.args, execute, suspended).then((outcome) => {
      slot.settle(outcome, suspended())
      gate.leave(exclusive)
    })
  }
}

/**
 * A batch's end as its results are emitted. `closed`: a result went out marked `isLastInTurn`, so
 * the calls after it (each waits for approval, or for a sub-agent's) are suspended whatever comes
 * next. An interrupt from then on (a listener's, on that very result) finds nothing running, as one
 * after the batch would: answering them `aborted` would make a second last result of the turn,
 * where the session's replay marks only the very last.
 */
interface BatchProgress extends BatchEnd {
  closed: boolean
}

async function emitResults(
  batch: ToolBatch,
  slots: Slot[],
  started: boolean[],
  end: BatchProgress,
): Promise<void> {
  const { rt, calls, responseId } = batch
  const { events, settings, journal } = rt
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!
    if (end.closed && batch.held?.has(call.id)) {
      end.suspended.push(call)
      continue
    }
    if (batch.held?.has(call.id) && !slots[i]!.settled) {
      // It waits for approval unless the batch is interrupted before the other calls end.
      await Promise.all(slots.filter((_, j) => !batch.held!.has(calls[j]!.id)).map((slot) => slot.promise))
      slots[i]!.settle(errorOutcome('Waiting for approval.'), true)
    }
    const settled = await slots[i]!.promise
    let outcome = batch.finish ? await batch.finish(call.id, settled, !slots[i]!.suspended) : settled
    await slots[i]!.progress
    const progressFailure = slots[i]!.progressFailure
    if (progressFailure) throw progressFailure.error
    if (slots[i]!.suspended) {
      // As a held call: it waits only if the batch is not stopped before its other calls end. A
      // task that stops leaves no call waiting (its result comes in call order with the others').
      await Promise.all(slots.filter((_, j) => !batch.held?.has(calls[j]!.id)).map((slot) => slot.promise))
      if (!batch.signal.aborted || end.closed) {
        end.suspended.push(call)
        continue
      }
      const failure = rt.hostFailure()
      const stopped = failure ? hostFailureOutcome('running', failure.message) : abortedOutcome(true)
      outcome = batch.finish ? await batch.finish(call.id, stopped, true) : stopped
    }
    if (!started[i] || batch.signal.aborted) announceUnstarted(batch, started, i)
    const stamp = { id: settings.createId(), createdAt: settings.now() }
    const message = resultMessage(
      call,
      outcome,
      settings.toolOutputLimit,
      stamp,
      journal.store.maxRecordBytes,
    )
    await journal.persist(message)
    if (message.status === 'aborted') end.interrupted = true
    const isLastInTurn = await lastResult(batch, slots, i)
    if (isLastInTurn && i < calls.length - 1) end.closed = true
    events.emit('tool_result', {
      responseId,
      toolCallId: call.id,
      toolName: call.name,
      result: message.outputText,
      uiExtra: message.uiExtra,
      status: toolResultEventStatus(message.status),
      taskMetadata: message.taskMetadata,
      isLastInTurn,
    })
    if (message.sideEffects?.includes('todo_change') && message.uiExtra?.type === 'todo_list') {
      events.emit('todo_change', { todos: message.uiExtra.todos })
    }
  }
}

/**
 * Whether result `i` is the last of its turn: no later call of the batch gets a result now.
 * Neither a suspended call nor a held one (waiting for approval) gets one, so while the later
 * calls that have not settled all run sub-agents (which may pause for approval), this waits for
 * them to settle; a later call that settled with a result, or runs no sub-agent, answers `false`
 * at once.
 */
async function lastResult(batch: ToolBatch, slots: readonly Slot[], i: number): Promise<boolean> {
  for (;;) {
    const running: Promise<ToolOutcome>[] = []
    for (let j = i + 1; j < slots.length; j++) {
      const slot = slots[j]!
      const id = batch.calls[j]!.id
      if (slot.settled) {
        if (!slot.suspended) return false
      } else if (batch.held?.has(id)) {
        // Waits for approval: no result in this turn, unless an interrupt (which settles it) comes.
      } else if (batch.mayBeSuspended?.(id)) running.push(slot.promise)
      else return false
    }
    if (running.length === 0) return true
    await Promise.race(running)
  }
}

/**
 * Before result `i` once the batch was interrupted (or failed): the calls from `i` on that never
 * started get results without running. Those that do not wait for approval are announced now,
 * together and in call order, as a response's calls are when they start, so the replay (which
 * announces a response's running calls together, before the first record of any of them) shows
 * each call where it was live. A call that waited for approval is announced right before its own
 * result, as the replay shows one answered while it waited.
 */
function announceUnstarted(batch: ToolBatch, started: boolean[], i: number): void {
  const waited = !started[i] && batch.held?.has(batch.calls[i]!.id) === true
  announceStopped(batch, started, i)
  if (waited) {
    started[i] = true
    announce(batch, batch.calls[i]!)
  }
}

/**
 * The calls from `from` on that never started and do not wait for approval, announced together
 * and in call order, once the batch was stopped: before its first record after the stop (a result,
 * or a running call's `tool_progress`), where the replay announces them.
 */
function announceStopped(batch: ToolBatch, started: boolean[], from: number): void {
  const { calls, held } = batch
  for (let j = from; j < calls.length; j++) {
    if (started[j] || held?.has(calls[j]!.id)) continue
    started[j] = true
    announce(batch, calls[j]!)
  }
}

/**
 * `tool_call`: the call starts (or, interrupted before it could, is about to be answered); none
 * for a call announced before (`ToolBatch.announced`).
 */
function announce(batch: ToolBatch, call: ToolCallPart): void {
  if (batch.announced?.has(call.id)) return
  batch.rt.events.emit('tool_call', {
    responseId: batch.responseId,
    toolCallId: call.id,
    toolName: call.name,
    arguments: call.argumentsJson,
  })
}

/** A progress message as text; `undefined` for a value that cannot be shown as text. */
function progressText(message: unknown): string | undefined {
  if (typeof message === 'string') return message
  try {
    return String(message)
  } catch {
    return undefined
  }
}

/** The ids of the batch's other calls (a `tool_progress` names them), made when a call reports progress. */
function siblingsOf(calls: readonly ToolCallPart[], call: ToolCallPart): string[] {
  return calls.filter((other) => other.id !== call.id).map((other) => other.id)
}

type CallPlan = { tool: Tool; args: unknown } | { tool: undefined; outcome: ToolOutcome }

/** Decides whether a call can run: a cut-off call, an unknown tool or bad arguments never do. */
function planCall(call: ToolCallPart, tools: ToolSet): CallPlan {
  if (call.incomplete) return { tool: undefined, outcome: errorOutcome(INCOMPLETE_CALL_TEXT) }
  const tool = tools.byName.get(call.name)
  if (!tool) {
    const names = [...tools.byName.keys()]
    const available = names.length > 0 ? `Available tools: ${names.join(', ')}.` : 'No tools are available.'
    return { tool: undefined, outcome: errorOutcome(`Unknown tool "${call.name}". ${available}`) }
  }
  const parsed = tool.parseArguments(call.argumentsJson)
  if (!parsed.ok) {
    return {
      tool: undefined,
      outcome: errorOutcome(`Invalid arguments for tool "${call.name}": ${parsed.error}`),
    }
  }
  return { tool, args: parsed.args }
}

/** One call's outcome: settled once, by the call, a refusal or an interrupt, whichever is first. */
class Slot {
  settled = false
  /**
   * The tool returned and its sub-agents ended: only `afterToolCall` may still run. A host failure
   * from then on does not say the call stopped before it finished.
   */
  finished = false
  /** The tool was called (`beforeToolCall` let it run): a host failure from then on stopped it. */
  running = false
  /** Settled by a call that is suspended: it gets no result now. */
  suspended = false
  /** The call's progress records, persisted in order; its result waits for them. */
  progress: Promise<void> = Promise.resolve()
  progressFailure: { error: unknown } | undefined
  readonly promise: Promise<ToolOutcome>
  #resolve!: (outcome: ToolOutcome) => void

  constructor() {
    this.promise = new Promise((resolve) => {
      this.#resolve = resolve
    })
  }

  settle(outcome: ToolOutcome, suspended = false): void {
    if (this.settled) return
    this.settled = true
    this.suspended = suspended
    this.#resolve(outcome)
  }
}
