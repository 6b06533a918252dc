import type { ToolCallPart } from '@kode/protocol'
import type { Tool, ToolOutput } from '../tools/define-tool.js'
import { errorMessageOf } from '../tools/execute-tool-call.js'
import { errorOutcome, hostFailureOutcome, outcomeOf, type ToolOutcome } from '../tools/tool-outcome.js'
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
 * fails the task (`rt.failHost`) and the call gets an `error` result.
 */
export async function runHookedCall(
  rt: HookScope,
  call: ToolCallPart,
  tool: Tool,
  args: unknown,
  run: (args: unknown) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  const { beforeToolCall, afterToolCall } = rt.hooks
  const ctx = { sessionId: rt.sessionId, signal: rt.signal }
  let callArgs = args
  if (beforeToolCall) {
    let decision: Awaited<ReturnType<typeof beforeToolCall>>
    try {
      decision = await beforeToolCall(call, ctx)
    } catch (error) {
      return hookFailed(rt, 'beforeToolCall', error)
    }
    if (decision && 'deny' in decision) return errorOutcome(`The call was refused: ${decision.deny}`)
    if (decision && 'arguments' in decision) {
      const parsed = tool.parseArguments(JSON.stringify(decision.arguments ?? {}))
      if (!parsed.ok) {
        return errorOutcome(
          `Invalid arguments for tool "${call.name}" (as rewritten by a hook): ${parsed.error}`,
        )
      }
      callArgs = parsed.args
    }
  }
  const outcome = await run(callArgs)
  if (!afterToolCall || outcome.status === 'aborted') return outcome
  try {
    const replaced = await afterToolCall(call, toolOutputOf(outcome), ctx)
    return replaced === undefined ? outcome : outcomeOf(replaced, call.name)
  } catch (error) {
    return hookFailed(rt, 'afterToolCall', error)
  }
}

function hookFailed(rt: HookScope, hook: string, error: unknown): ToolOutcome {
  const message = `The ${hook} hook threw: ${errorMessageOf(error)}`
  rt.failHost(error, message)
  return hostFailureOutcome(true, message)
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
