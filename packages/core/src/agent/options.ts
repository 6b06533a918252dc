import type { ToolCallPart } from '@kode/protocol'
import { type LLMClient, type RetryOptions, resolveRetryPolicy } from '@kode/providers'
import type { SessionStore } from '@kode/session'
import { estimateTokens, type TokenCounter, TokenEstimator } from '../compaction/estimate.js'
import { type CompactionOptions, resolveCompaction } from '../compaction/options.js'
import type { HistoryFormatter } from '../formatters/history-formatter.js'
import type { AgentHooks } from '../hooks/hooks.js'
import { positive, positiveInteger } from '../settings/limits.js'
import type { ModelSettings } from '../settings/model-settings.js'
import type { EngineSettings } from '../task/runtime.js'
import type { Tool } from '../tools/define-tool.js'
import { errorMessageOf } from '../tools/execute-tool-call.js'

/** What `createAgent` takes. Only `client` and `store` are required. */
export interface AgentOptions {
  /** The model to talk to (`createClient` from `@kode/providers`); `setClient` swaps it. */
  client: LLMClient
  /** Where the session's history is persisted as it happens. */
  store: SessionStore
  /** The tools offered to the model (`defineTool`, `defineSubAgent`). Names must be unique. */
  tools?: readonly Tool[] | undefined
  /**
   * The system prompt. Persisted as a system message when it differs from the one the session
   * last recorded; a resumed session without one keeps its recorded prompt.
   */
  system?: string | undefined
  /**
   * How the history is presented to the model and actions are read from its answers:
   * `nativeFormatter()` (the default: provider tool calls), `reactFormatter()`,
   * `codeActFormatter()`, or your own (see docs/history-formatters.md).
   */
  historyFormatter?: HistoryFormatter | undefined
  /**
   * How the model is asked to answer (token limit, temperature, reasoning, tool choice,
   * provider-specific fields); a run's `modelSettings` override these field by field.
   */
  modelSettings?: ModelSettings | undefined
  /** Lifecycle hooks: `beforeModelCall`, `beforeToolCall`, `afterToolCall` (see docs/agents.md). */
  hooks?: AgentHooks | undefined
  /** Continue this session (created when the store has no session by this id). Default: a new one. */
  sessionId?: string | undefined
  /** Turns per task before the task stops with reason `max_turns`. Default 50. */
  maxTurns?: number | undefined
  /** Tool calls of one response that run at once. Default 4. */
  toolConcurrency?: number | undefined
  /** A tool call's time limit, unless the tool sets its own. Default 600,000 ms; `Infinity`: none. */
  toolTimeoutMs?: number | undefined
  /** The longest tool output text the model sees, in characters (head and tail kept). Default 30,000. */
  toolOutputLimit?: number | undefined
  /**
   * Retries of a response that failed after it had started streaming (the client's own retries
   * cover failures before any output). Default: 4 attempts in all, backoff from 1 s.
   */
  retry?: RetryOptions | undefined
  /** Clock in epoch milliseconds, for event timestamps and record times. Default `Date.now`. */
  now?: (() => number) | undefined
  /** Ids of new sessions and records. Default `crypto.randomUUID()`. */
  createId?: (() => string) | undefined
  /** The text of the `error` result for a tool that threw. Default: the error's message. */
  formatToolError?: ((error: unknown, call: ToolCallPart) => string) | undefined
  /**
   * Long sessions: before each model call the request's input is checked against the model's
   * context window, and older turns are summarised when it passes `threshold` (see "Long
   * sessions" in docs/agents.md). On by default; `false` turns it off.
   */
  compaction?: CompactionOptions | false | undefined
  /**
   * Counts the tokens of a text for the context budget. Default `estimateTokens` (4 characters a
   * token); pass the model's tokenizer for exact figures.
   */
  countTokens?: TokenCounter | undefined
}

/** Defaults of the `createAgent` limits. */
export const AGENT_DEFAULTS = Object.freeze({
  maxTurns: 50,
  toolConcurrency: 4,
  toolTimeoutMs: 600_000,
  toolOutputLimit: 30_000,
})

/** Checks the options and fills in defaults; throws `AgentError` (`invalid_options`). */
export function resolveSettings(options: AgentOptions): EngineSettings {
  return {
    maxTurns: positiveInteger('maxTurns', options.maxTurns ?? AGENT_DEFAULTS.maxTurns),
    toolConcurrency: positiveInteger(
      'toolConcurrency',
      options.toolConcurrency ?? AGENT_DEFAULTS.toolConcurrency,
    ),
    toolTimeoutMs: positive('toolTimeoutMs', options.toolTimeoutMs ?? AGENT_DEFAULTS.toolTimeoutMs),
    toolOutputLimit: positive('toolOutputLimit', options.toolOutputLimit ?? AGENT_DEFAULTS.toolOutputLimit),
    retry: resolveRetryPolicy(options.retry),
    now: options.now ?? Date.now,
    createId: options.createId ?? (() => globalThis.crypto.randomUUID()),
    formatToolError: options.formatToolError ?? errorMessageOf,
    estimator: new TokenEstimator(options.countTokens ?? estimateTokens),
    compaction: resolveCompaction(options.compaction),
  }
}
