const AGENT_ERROR = Symbol.for('kode.AgentError')

/** Why the engine refused something, one value per mistake a host may handle differently. */
export type AgentErrorCode =
  /** `run` was called while a task of the same agent was still running. */
  | 'agent_busy'
  /** `run` was called after `close()`. */
  | 'agent_closed'
  /** A run's events were iterated a second time: a run has one consumer. */
  | 'already_iterated'
  /** A `createAgent` option is unusable (a non-positive limit, two tools with one name). */
  | 'invalid_options'
  /** A `defineTool` / `defineSubAgent` definition is unusable (a name providers reject). */
  | 'invalid_tool'
  /** `continue` named a tool call that awaits no approval in this session. */
  | 'unknown_approval'
  /** `continue` decided a call twice, or one that was already decided. */
  | 'approval_already_decided'
  /** `continue` left calls that await approval without a decision. */
  | 'approvals_missing'
  /** `continue` found no unfinished task and no pending approval in the session. */
  | 'nothing_to_continue'
  /**
   * `run` or `steer` was given an input whose user message is larger than the session store keeps
   * in one record (its `maxRecordBytes`): nothing was written, and a smaller input can be sent.
   */
  | 'input_too_large'
  /**
   * A tool called `ctx.runSubAgent` after its call ended (it returned, timed out, or was
   * interrupted): the call's result can no longer link the child, so none starts.
   */
  | 'tool_call_ended'

/**
 * A mistake in how the host uses the engine. Failures of the model or of tools are never thrown:
 * they arrive as events. `AgentError.is(e)` recognises one from any copy of this package.
 */
export class AgentError extends Error {
  override readonly name = 'AgentError'
  readonly code: AgentErrorCode
  readonly [AGENT_ERROR] = true

  constructor(code: AgentErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
  }

  /** True for an `AgentError` from any copy of this package. */
  static is(value: unknown): value is AgentError {
    return (
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[AGENT_ERROR] === true
    )
  }
}
