/**
 * Why a tool call's signal aborted when its time limit ran out: a `TimeoutError` (as a tool's
 * `signal.reason` documents), which also says which tool and what limit, so a sub-agent the call
 * ran can tell its own session what happened (a timeout, not the user's interrupt).
 */
export class ToolTimeoutError extends DOMException {
  readonly toolName: string
  readonly timeoutMs: number

  constructor(toolName: string, timeoutMs: number) {
    super(`Tool "${toolName}" timed out after ${timeoutMs} ms.`, 'TimeoutError')
    this.toolName = toolName
    this.timeoutMs = timeoutMs
  }
}
