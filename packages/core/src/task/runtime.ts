import type { SubAgentState, ToolCallPart, UserContentPart } from '@kode/protocol'
import type { LLMClient, RetryPolicy } from '@kode/providers'
import type { CreateSessionInit, SessionStore } from '@kode/session'
import type { TokenEstimator } from '../compaction/estimate.js'
import type { CompactionSettings } from '../compaction/options.js'
import type { FormatterInstructions, HistoryFormatter } from '../formatters/history-formatter.js'
import type { AgentHooks } from '../hooks/hooks.js'
import type { ModelSettings } from '../settings/model-settings.js'
import type { ToolSet } from '../tools/tool-set.js'
import type { Journal } from './journal.js'
import type { EventSink, TaskEvents } from './task-events.js'

/** The limits and sources every task of an agent (and of its sub-agents) shares. */
export interface EngineSettings {
  maxTurns: number
  toolConcurrency: number
  toolTimeoutMs: number
  toolOutputLimit: number
  retry: RetryPolicy
  now: () => number
  createId: () => string
  formatToolError: (error: unknown, call: ToolCallPart) => string
  /** Counts tokens for the context budget (the host's counter or the default estimate). */
  estimator: TokenEstimator
  /** When and how sessions are compacted; `undefined`: never. */
  compaction: CompactionSettings | undefined
}

/** Why a task's signal aborted when it was not the user: the host failed (an event listener threw). */
export interface HostFailure {
  /** The text of the `error` record, the `error` event and the calls' `error` results. */
  readonly message: string
}

/** Everything one running task works with. Sub-agent tasks get their own, sharing settings and sink. */
export interface TaskRuntime {
  readonly sessionId: string
  /**
   * Aborts when the task must stop: the user interrupted, or the host failed (see `hostFailure`).
   */
  readonly signal: AbortSignal
  /**
   * Set when `signal` aborted because the host failed rather than because the user interrupted:
   * what stops then ends as an `error` (error results, an `error` record, reason `error`), never
   * as `aborted`, which means the user interrupted and nothing else.
   */
  hostFailure(): HostFailure | undefined
  readonly settings: EngineSettings
  readonly store: SessionStore
  readonly journal: Journal
  readonly events: TaskEvents
  /** The run's raw sink, for sub-agents' events. */
  readonly sink: EventSink
  readonly tools: ToolSet
  /** How the history is presented to the model and actions are read from its responses. */
  readonly formatter: HistoryFormatter
  /** What the formatter adds to every request: native tools and system text. */
  readonly instructions: FormatterInstructions
  readonly system: string | undefined
  readonly subAgentState: SubAgentState | undefined
  /** How the session is created when the store does not have it yet. */
  readonly sessionInit: CreateSessionInit
  /** The agent's lifecycle hooks (`{}` when none). */
  readonly hooks: AgentHooks
  /**
   * Fails the task because the host failed (a throwing hook): sets `hostFailure` to `message`
   * and aborts `signal`; the run then rejects with `error`, as for a throwing listener.
   */
  failHost(error: unknown, message: string): void
  /** The model settings of this task (the agent's, overridden by the run's). */
  readonly modelSettings: ModelSettings
  /** The client of the next model call (the agent's may change between turns). */
  client(): LLMClient
  /** Takes the user messages the host queued with `steer` (empty for sub-agents). */
  takeSteering(): (readonly UserContentPart[])[]
}
