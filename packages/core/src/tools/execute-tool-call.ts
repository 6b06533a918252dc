import type { ToolCallPart } from '@kode/protocol'
import { thrownText } from '../thrown-text.js'
import { CallSignal } from './call-signal.js'
import type { Tool, ToolContext } from './define-tool.js'
import { errorOutcome, outcomeOf, type ToolOutcome } from './tool-outcome.js'
import { ToolTimeoutError } from './tool-timeout.js'

/** The longest delay `setTimeout` honours; longer timeouts are treated as none. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** One validated call, ready to run. */
export interface ToolExecution {
  tool: Tool
  call: ToolCallPart
  args: unknown
  /** The task's signal; the call's own signal also aborts on timeout. */
  taskSignal: AbortSignal
  timeoutMs: number
  formatToolError: (error: unknown, call: ToolCallPart) => string
  /** Builds the context `execute` sees, around the call's own signal (made when first read). */
  context(signal: CallSignal): ToolContext
}

/**
 * Runs one tool call to an outcome; never rejects. A throw becomes an `error` outcome with the
 * error's message; a timeout becomes an `error` outcome at once (the call's signal aborts, and
 * whatever the tool returns later is ignored). An interrupt is the batch's to settle.
 */
export async function executeToolCall(run: ToolExecution): Promise<ToolOutcome> {
  try {
    return await executeGuarded(run)
  } catch (error) {
    // A bug of the engine or the host (the call's context threw): still an outcome, never a rejection
    // nobody awaits.
    return errorOutcome(`The tool call failed before it ran: ${thrownText(error)}`)
  }
}

async function executeGuarded(run: ToolExecution): Promise<ToolOutcome> {
  const { tool, taskSignal, timeoutMs } = run
  const signal = new CallSignal(taskSignal)
  try {
    const execution = invoke(run, signal)
    if (!(timeoutMs <= MAX_TIMER_MS)) return await execution
    // One promise for the call and its timer (`invoke` never rejects).
    return await new Promise<ToolOutcome>((resolve) => {
      const timer = setTimeout(() => {
        const reason = new ToolTimeoutError(tool.name, timeoutMs)
        // Ended first: what the tool does when its signal aborts (a last progress report) comes
        // after its call ended.
        signal.end()
        signal.abort(reason)
        resolve(errorOutcome(reason.message))
      }, timeoutMs)
      void execution.then((outcome) => {
        clearTimeout(timer)
        resolve(outcome)
      })
    })
  } finally {
    signal.end()
  }
}

async function invoke(run: ToolExecution, signal: CallSignal): Promise<ToolOutcome> {
  try {
    return outcomeOf(await run.tool.execute(run.args, run.context(signal)), run.tool.name)
  } catch (error) {
    return errorOutcome(describeToolError(run, error))
  }
}

/**
 * The text of a tool's failure. A tool may throw anything (a value whose `toString` or `message`
 * getter throws, a null-prototype object, a Symbol, `undefined`), and a host's `formatToolError`
 * may itself throw: whatever happens, the call still ends with an `error` result.
 */
function describeToolError(run: ToolExecution, error: unknown): string {
  try {
    const text = run.formatToolError(error, run.call)
    if (typeof text === 'string') return text
  } catch {
    // Falls through to the default wording.
  }
  return errorMessageOf(error)
}

/**
 * The default `formatToolError`: the error's message, never its stack; never throws (see
 * {@link thrownText}).
 */
export function errorMessageOf(error: unknown): string {
  return thrownText(error, (kind) => `The tool threw ${kind} that cannot be shown as text.`)
}
