import type { ToolCallPart } from '@kode/protocol'
import type { LLMRequest } from '@kode/providers'
import type { ToolOutput } from '../tools/define-tool.js'

/** What every hook sees besides its subject. */
export interface HookContext {
  /** The session of the task (a sub-agent's own session inside a sub-agent). */
  readonly sessionId: string
  /** Aborted when the user interrupts the task; long hooks should stop. */
  readonly signal: AbortSignal
}

/** What `beforeToolCall` decides: run the call, refuse it, or run it with other arguments. */
export type ToolCallDecision =
  /** Run the call as the model asked. */
  | { allow: true }
  /** Do not run it; the model reads an `error` result with this reason. */
  | { deny: string }
  /** Run it with these arguments instead (validated against the tool's schema again). */
  | { arguments: unknown }

/**
 * Lifecycle hooks (`createAgent({ hooks })`), awaited in the task's order. A hook that throws
 * fails the task as a throwing event listener does: reason `error`, and the run rejects with the
 * hook's error. Sub-agents run their parent agent's hooks.
 */
export interface AgentHooks {
  /**
   * Sees (and may replace) each request before it is sent, a compaction's summary request included
   * (its `system` is `COMPACTION_PROMPT`): return a request, or nothing to keep it. A request
   * whose settings `modelSettings` would refuse fails like a throw, before anything is sent. Its
   * messages are the session's own objects: change one by returning a new object in its place (a
   * message changed in place is not converted again once a request has carried it).
   */
  beforeModelCall?(
    request: LLMRequest,
    ctx: HookContext,
  ): LLMRequest | undefined | Promise<LLMRequest | undefined>
  /**
   * Runs before each tool call whose arguments are valid (and, for a tool that needs approval,
   * after it was approved): allow it, deny it, or rewrite its arguments. Nothing returned allows it;
   * an object with none of `allow`, `deny` and `arguments` fails like a throw (never open).
   */
  beforeToolCall?(
    call: ToolCallPart,
    ctx: HookContext,
  ): ToolCallDecision | undefined | Promise<ToolCallDecision | undefined>
  /**
   * Sees (and may replace) each executed call's result before it is persisted and shown: return a
   * result (text or a `ToolOutput`), or nothing to keep it. Anything else fails like a throw. For a
   * call that ran sub-agents it runs once they have ended, and the result links them (as recorded).
   */
  afterToolCall?(
    call: ToolCallPart,
    result: ToolOutput,
    ctx: HookContext,
  ): ToolOutput | string | undefined | Promise<ToolOutput | string | undefined>
}
