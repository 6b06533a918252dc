import { CodecError, roundTripHistoryEvent, type ToolCallPart } from '@kode/protocol'
import { thrownText } from '../thrown-text.js'
import type { Tool, ToolOutput } from '../tools/define-tool.js'
import {
  abortedOutcome,
  type CallStage,
  errorOutcome,
  hostFailureOutcome,
  readOutcome,
  type ToolOutcome,
} from '../tools/tool-outcome.js'
import type { AgentHooks } from './hooks.js'

/** What running the tool hooks needs of the task (the task runtime is one). */
export interface HookScope {
  readonly hooks: AgentHooks
  readonly sessionId: string
  readonly signal: AbortSignal
  /** Fails the task because the host failed: a hook threw. */
  failHost(error: unknown, message: string): void
}

/**
 * Runs one valid call through the agent's tool hooks: `beforeToolCall` may deny it or rewrite
 * its arguments (validated again), `afterToolCall` may replace its result. A hook that throws
 * fails the task (`rt.failHost`) and the call gets an `error` result. A call that ended
 * `suspended()` (its sub-agent waits for approval) has no result yet, so `afterToolCall` waits
 * for the call's run when the task continues.
 */
export async function runHookedCall(
  rt: HookScope,
  call: ToolCallPart,
  tool: Tool,
  args: unknown,
  run: (args: unknown) => Promise<ToolOutcome>,
  suspended: () => boolean = () => false,
): Promise<ToolOutcome> {
  const { beforeToolCall, afterToolCall } = rt.hooks
  const ctx = { sessionId: rt.sessionId, signal: rt.signal }
  // Each hook gets its own copy of the call: one that changes it (its id, its arguments) must not
  // change which call the result answers.
  let callArgs = args
  if (beforeToolCall) {
    let decision: Decision
    try {
      // Reading the decision is the hook's too: one that is not an object, or arguments JSON
      // cannot hold (a BigInt, a cycle), fails like a throw instead of leaving the call unanswered.
      decision = readDecision(await beforeToolCall({ ...call }, ctx))
    } catch (error) {
      return hookFailed(rt, 'beforeToolCall', error, 'pending')
    }
    if ('deny' in decision)
      return errorOutcome(decision.deny ? `The call was refused: ${decision.deny}` : 'The call was refused.')
    if ('argumentsJson' in decision) {
      const parsed = tool.parseArguments(decision.argumentsJson)
      if (!parsed.ok) {
        return errorOutcome(
          `Invalid arguments for tool "${call.name}" (as rewritten by a hook): ${parsed.error}`,
        )
      }
      callArgs = parsed.args
    }
  }
  const outcome = await run(callArgs)
  // Once the task is interrupted (or failed) the call has its result already: a tool that ended
  // later has nothing for the hook to see or replace.
  if (!afterToolCall || outcome.status === 'aborted' || suspended() || rt.signal.aborted) return outcome
  try {
    const replaced = await afterToolCall({ ...call }, toolOutputOf(outcome), ctx)
    // `null` is nothing too, as for the other hooks: it must not erase the result (an error included).
    return replaced === undefined || replaced === null ? outcome : readReplacement(replaced, call.name)
  } catch (error) {
    return hookFailed(rt, 'afterToolCall', error, 'finished')
  }
}

/** A refusal's `deny` is its reason as text, `undefined` when it gave none. */
type Decision = { allow: true } | { deny: string | undefined } | { argumentsJson: string }

function readDecision(decision: unknown): Decision {
  if (decision === undefined || decision === null) return { allow: true }
  if (typeof decision !== 'object') {
    throw new TypeError(
      `it returned a ${typeof decision} instead of { allow: true }, { deny } or { arguments }`,
    )
  }
  if ('deny' in decision) {
    // A refusal all the same: one without a reason (`undefined`, blank) must not read `: undefined`.
    const reason = (decision as { deny: unknown }).deny
    const text = reason === undefined || reason === null ? '' : String(reason).trim()
    return { deny: text === '' ? undefined : text }
  }
  if ('allow' in decision && (decision as { allow: unknown }).allow !== true) {
    // `{ allow: false }` reads as a refusal: it must never let the call run.
    throw new TypeError('it returned allow other than true; refuse a call with { deny: reason }')
  }
  if (!('arguments' in decision)) {
    if ('allow' in decision) return { allow: true }
    // A misspelt decision (`{ allowed: false }`, `{}`) must not read as "nothing returned":
    // a permission hook never fails open.
    throw new TypeError('it returned an object with none of allow, deny or arguments')
  }
  const json: string | undefined = JSON.stringify((decision as { arguments: unknown }).arguments ?? {})
  // A function or a Symbol has no JSON; it must not pass for "no arguments".
  if (json === undefined) throw new TypeError('its arguments cannot be written as JSON')
  return { argumentsJson: json }
}

/**
 * The result `afterToolCall` put in place of the tool's. One that cannot be read is the hook's bug
 * and fails like a throw: read as a tool's result would be, it would tell the model the tool
 * returned something odd, hide the tool's real result, and let the task go on as if all was well.
 */
function readReplacement(replaced: unknown, toolName: string): ToolOutcome {
  const refuse = (what: string) =>
    new TypeError(
      `afterToolCall must return a result (text or an object with a string outputText) or nothing; it returned ${what}`,
    )
  if (typeof replaced === 'string') return readOutcome(replaced, toolName)
  if (typeof replaced !== 'object' || replaced === null) throw refuse(`a ${typeof replaced}`)
  if (Array.isArray(replaced)) throw refuse('an array')
  let read: ToolOutcome | undefined
  try {
    if (typeof (replaced as { outputText?: unknown }).outputText === 'string')
      read = readOutcome(replaced, toolName)
  } catch {
    throw refuse('an object that could not be read')
  }
  if (read === undefined) throw refuse('an object without a string outputText')
  // What the history cannot hold (a part of no known type, a BigInt in uiExtra) is the hook's
  // bug too: kept for the result, it would read as the tool's.
  try {
    roundTripHistoryEvent({ role: 'tool', id: 'r', createdAt: 0, toolCallId: 'c', toolName, ...read })
  } catch (error) {
    if (!CodecError.is(error)) throw error
    throw refuse(`a result the history cannot hold (${error.message})`)
  }
  return read
}

/**
 * The outcome of a call whose hook threw: the task fails (`rt.failHost`). Not once the task was
 * interrupted (or had failed already): the call is answered by then, and a hook that stops when its
 * signal aborts (rejecting with the abort, as `fetch` does) did what it was asked to.
 */
function hookFailed(rt: HookScope, hook: string, error: unknown, stage: CallStage): ToolOutcome {
  if (rt.signal.aborted) return abortedOutcome(true)
  const message = `The ${hook} hook threw: ${thrownText(error)}`
  rt.failHost(error, message)
  return hostFailureOutcome(stage, message)
}

function toolOutputOf(outcome: ToolOutcome): ToolOutput {
  const output: ToolOutput = {
    outputText: outcome.outputText,
    status: outcome.status === 'error' ? 'error' : 'success',
  }
  if (outcome.parts.length > 0) output.parts = outcome.parts
  if (outcome.uiExtra !== undefined) output.uiExtra = outcome.uiExtra
  if (outcome.sideEffects !== undefined) output.sideEffects = outcome.sideEffects
  if (outcome.taskMetadata !== undefined) output.taskMetadata = outcome.taskMetadata
  return output
}
