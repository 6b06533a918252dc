import type { ToolCallPart } from '@kode/protocol'
import type { Tool, ToolContext } from './define-tool.js'
import { errorOutcome, outcomeOf, type ToolOutcome } from './tool-outcome.js'

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
  /** Builds the context `execute` sees, around the call's own signal. */
  context(signal: AbortSignal): ToolContext
}

/**
 * Runs one tool call to an outcome; never rejects. A throw becomes an `error` outcome with the
 * error's message; a timeout becomes an `error` outcome at once (the call's signal aborts, and
 * whatever the tool returns later is ignored). An interrupt is the batch's to settle.
 */
export async function executeToolCall(run: ToolExecution): Promise<ToolOutcome> {
  const { tool, taskSignal, timeoutMs } = run
  const controller = new AbortController()
  const forward = () => controller.abort(taskSignal.reason)
  if (taskSignal.aborted) forward()
  else taskSignal.addEventListener('abort', forward, { once: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    const execution = invoke(run, controller.signal)
    if (!(timeoutMs <= MAX_TIMER_MS)) return await execution
    const timeout = new Promise<ToolOutcome>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new DOMException(`tool ${tool.name} timed out`, 'TimeoutError'))
        resolve(errorOutcome(`Tool "${tool.name}" timed out after ${timeoutMs} ms.`))
      }, timeoutMs)
    })
    return await Promise.race([execution, timeout])
  } finally {
    clearTimeout(timer)
    taskSignal.removeEventListener('abort', forward)
  }
}

async function invoke(run: ToolExecution, signal: AbortSignal): Promise<ToolOutcome> {
  try {
    return outcomeOf(await run.tool.execute(run.args, run.context(signal)), run.tool.name)
  } catch (error) {
    return errorOutcome(run.formatToolError(error, run.call))
  }
}

/** The default `formatToolError`: the error's message, never its stack. */
export function errorMessageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name
  return typeof error === 'string' ? error : String(error)
}
