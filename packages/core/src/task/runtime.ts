import type {
  SubAgentState,
  TaskFinishReason,
  TaskMetadataSummary,
  ToolCallPart,
  ToolDefinition,
  UserContentPart,
} from '@kode/protocol'
import type { LLMClient, RetryPolicy } from '@kode/providers'
import type { CreateSessionInit, SessionStore } from '@kode/session'
import type { TokenEstimator } from '../compaction/estimate.js'
import type { CompactionSettings } from '../compaction/options.js'
import type { FormatterInstructions, HistoryFormatter } from '../formatters/history-formatter.js'
import type { AgentHooks } from '../hooks/hooks.js'
import type { OutputSpec } from '../output/output-spec.js'
import type { ModelSettings } from '../settings/model-settings.js'
import type { PendingApproval } from '../tools/approval.js'
import type { Tool } from '../tools/define-tool.js'
import type { Journal } from './journal.js'
import type { EventSink, TaskEvents } from './task-events.js'

/**
 * How a task ended, as `run(...).done` resolves it. `O` is the type of the structured output
 * (`Static<typeof schema>` for `run(input, { output: schema })`).
 */
export interface TaskOutcome<O = unknown> {
  /** The session the task ran in. */
  sessionId: string
  /**
   * `completed`, `max_turns`, `error` (a provider failure, or the host's: a throwing event listener),
   * `aborted` (the user interrupted), `awaiting_approval` (calls wait for the user's decision) or
   * `structured_output_invalid` (the answer did not validate against `output`, even after one
   * corrective turn).
   */
  reason: TaskFinishReason
  /** The final assistant text (`task_finish.taskResult`). */
  text: string
  /** The task's accounting, with the sub-agents it ran (`task_metadata.metadata`). */
  metadata: TaskMetadataSummary
  /**
   * The final answer as a value valid against the run's `output` schema: set when `reason` is
   * `completed` and a schema was given, never otherwise.
   */
  output?: O
  /** What stopped the task when `reason` is `error`, `max_turns` or `structured_output_invalid`. */
  errorMessage?: string
  /** The calls awaiting the user's decision when `reason` is `awaiting_approval` (see `agent.continue`). */
  pendingApprovals?: PendingApproval[]
}

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

/** An agent's tools, indexed once. */
export interface ToolSet {
  byName: ReadonlyMap<string, Tool>
  /** What the model is offered; `undefined` when there are no tools. */
  definitions: ToolDefinition[] | undefined
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
  /** The structured output the task's final answer must be (`run(input, { output })`), if any. */
  readonly output: OutputSpec | undefined
  /** The model settings of this task (the agent's, overridden by the run's). */
  readonly modelSettings: ModelSettings
  /** The client of the next model call (the agent's may change between turns). */
  client(): LLMClient
  /** Takes the user messages the host queued with `steer` (empty for sub-agents). */
  takeSteering(): (readonly UserContentPart[])[]
}

/** Indexes tools by name and builds what the model is offered. */
export function toolSet(tools: readonly Tool[]): ToolSet {
  const byName = new Map<string, Tool>()
  for (const tool of tools) byName.set(tool.name, tool)
  const definitions = tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
  }))
  return { byName, definitions: definitions.length > 0 ? definitions : undefined }
}
