import type { SubAgentState, ToolCallPart, UserContentPart } from '@kode/protocol'
import type { LLMClient, RetryPolicy } from '@kode/providers'
import type { CreateSessionInit, SessionStore } from '@kode/session'
import type { TokenEstimator } from '../compaction/estimate.js'
import type { CompactionSettings } from '../compaction/options.js'
import type { FormatterInstructions, HistoryFormatter } from '../formatters/history-formatter.js'
import type { AgentHooks } from '../hooks/hooks.js'
import type { TaskOutcome } from '../outcome.js'
import type { OutputSpec } from '../output/output-spec.js'
import type { ModelSettings } from '../settings/model-settings.js'
import type { SubAgentSpec } from '../tools/sub-agent-spec.js'
import type { ToolSet } from '../tools/tool-set.js'
import { AbortListeners } from './abort-listeners.js'
import type { ApprovalDecision, PendingCall } from './approval.js'
import { Journal } from './journal.js'
import type { SubAgentReads } from './sub-agent-reads.js'
import { type EventSink, TaskEvents } from './task-events.js'

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

/**
 * Why a task's signal aborted when it was not the user: the host failed (an event listener threw),
 * or, for a sub-agent, the tool call that ran it timed out.
 */
export interface HostFailure {
  /** The text of the `error` record, the `error` event and the calls' `error` results. */
  readonly message: string
  /** The `error` record's `code`, if any (`timeout` for a sub-agent's time limit). */
  readonly code?: string | undefined
}

/** The parent side of a sub-agent run: the task and the tool call that spawn it. */
export interface SubAgentParent {
  rt: TaskRuntime
  toolCallId: string
  /** The tool call's signal: the parent's interrupt (or the call's timeout) interrupts the child. */
  signal: AbortSignal
}

/** A sub-agent that paused for approval, to carry on instead of starting a new one. */
export interface SubAgentResume {
  /** The sub-agent's session. */
  sessionId: string
  /** The user's decisions on its pending calls. */
  approvals: readonly ApprovalDecision[]
  /**
   * Only settle what its dead process left (see `TaskStart`): the call that ran it was answered
   * without it, so it runs nothing and ends.
   */
  settleOnly?: boolean
}

/** How a sub-agent's task ended, as the parent's call that ran it needs it. */
export interface SubAgentRun {
  outcome: TaskOutcome
  /**
   * When it paused for approval, its pending calls as its history lists them: the parent records
   * them with what only the sub-agent's history holds (the response that asked for each).
   */
  pending: readonly PendingCall[]
}

/**
 * Runs a sub-agent's task for a tool call (`ToolContext.runSubAgent`) and resolves with how it
 * ended; with `resume`, carries on that paused sub-agent's session instead.
 */
export type SubAgentRunner = (
  parent: SubAgentParent,
  spec: SubAgentSpec,
  input: string | readonly UserContentPart[],
  resume?: SubAgentResume,
) => Promise<SubAgentRun>

/**
 * What a task shares with the sub-agents it starts: the run's store, event sink and hooks, its
 * host-failure state, and how a child task is started.
 */
export interface RunScope {
  readonly store: SessionStore
  /** The run's raw sink, for sub-agents' events. */
  readonly sink: EventSink
  /** The agent's lifecycle hooks (`{}` when none). */
  readonly hooks: AgentHooks
  /**
   * Set when `signal` aborted because the host failed rather than because the user interrupted:
   * what stops then ends as an `error` (error results, an `error` record, reason `error`), never
   * as `aborted`, which means the user interrupted and nothing else.
   */
  hostFailure(): HostFailure | undefined
  /**
   * Fails the task because the host failed (a throwing hook): sets `hostFailure` to `message`
   * and aborts `signal`; the run then rejects with `error`, as for a throwing listener.
   */
  failHost(error: unknown, message: string): void
  /**
   * Starts a sub-agent's task. The agent injects it: a child task is built above the task layer
   * (see `sub-agents/`), which the task layer does not import.
   */
  readonly runSubAgent: SubAgentRunner
  /**
   * The sub-agent sessions a dead process left, as the check before the run's first task listed
   * and read them, for settling them without reading them again.
   */
  readonly subAgentReads: SubAgentReads
}

/** Everything one running task works with. Sub-agent tasks get their own, in the parent's scope. */
export interface TaskRuntime extends RunScope {
  readonly sessionId: string
  /**
   * Aborts when the task must stop: the user interrupted, or the host failed (see `hostFailure`).
   */
  readonly signal: AbortSignal
  /** Listeners for `signal`'s abort that come and go (each batch of tool calls): see `AbortListeners`. */
  readonly aborts: AbortListeners
  readonly settings: EngineSettings
  readonly journal: Journal
  readonly events: TaskEvents
  readonly tools: ToolSet
  /** How the history is presented to the model and actions are read from its responses. */
  readonly formatter: HistoryFormatter
  /** What the formatter adds to every request: native tools and system text. */
  readonly instructions: FormatterInstructions
  readonly system: string | undefined
  readonly subAgentState: SubAgentState | undefined
  /** How the session is created when the store does not have it yet. */
  readonly sessionInit: CreateSessionInit
  /** The structured output the task's final answer must be (`run(input, { output })`), if any. */
  readonly output: OutputSpec | undefined
  /** The model settings of this task (the agent's, overridden by the run's). */
  readonly modelSettings: ModelSettings
  /** The client of the next model call (the agent's may change between turns). */
  client(): LLMClient
  /** Takes the user messages the host queued with `steer` (empty for sub-agents). */
  takeSteering(): (readonly UserContentPart[])[]
  /**
   * Puts messages taken and not delivered back at the head of the queue: the task failed (its
   * store) before it could deliver them, and they wait for the next run as if never taken.
   */
  returnSteering(messages: readonly (readonly UserContentPart[])[]): void
}

/** What is a task's own, as {@link createTaskRuntime} takes it. */
export interface TaskSetup {
  sessionId: string
  /** The engine generated `sessionId` (see `Journal`): the session is created before it is taken. */
  newSession?: boolean
  signal: AbortSignal
  settings: EngineSettings
  formatter: HistoryFormatter
  /** The tools offered, read at each use: an agent's tools may change between turns. */
  tools(): ToolSet
  /** What the formatter adds to every request, read at each use (it follows the tools). */
  instructions(): FormatterInstructions
  client(): LLMClient
  system: string | undefined
  modelSettings: ModelSettings
  /** A sub-agent's task: links its session to the parent's. Default: a top-level task. */
  subAgentState?: SubAgentState
  /** The session's journal, when the agent keeps one across tasks. Default: a new one. */
  journal?: Journal
  /** The host's queued messages. Default: none. */
  takeSteering?(): (readonly UserContentPart[])[]
  /** Puts undelivered messages back (see `TaskRuntime.returnSteering`). Default: none are taken. */
  returnSteering?(messages: readonly (readonly UserContentPart[])[]): void
  /** The structured output the final answer must be. Default: none (free text). */
  output?: OutputSpec | undefined
}

/**
 * Builds a task's runtime: a top-level task in the run's scope, or a sub-agent's task in its
 * parent's (a child task is a task). The session is created, if the store lacks it, for the
 * model the task starts with, and linked to the parent's session for a sub-agent.
 */
export function createTaskRuntime(scope: RunScope, setup: TaskSetup): TaskRuntime {
  const { sessionId, settings, formatter, subAgentState } = setup
  const { store, sink } = scope
  const client = setup.client()
  const model = { model: client.model, provider: client.provider }
  const sessionInit: CreateSessionInit = subAgentState
    ? {
        parentSessionId: subAgentState.parentSessionId,
        subAgent: { name: subAgentState.name, parentToolCallId: subAgentState.parentToolCallId },
        ...model,
      }
    : model
  return {
    store,
    sink,
    hooks: scope.hooks,
    hostFailure: scope.hostFailure,
    failHost: scope.failHost,
    runSubAgent: scope.runSubAgent,
    subAgentReads: scope.subAgentReads,
    sessionId,
    signal: setup.signal,
    aborts: new AbortListeners(setup.signal),
    settings,
    journal:
      setup.journal ?? new Journal(store, sessionId, formatter, setup.instructions(), setup.newSession),
    events: new TaskEvents(sessionId, settings.now, sink),
    get tools() {
      return setup.tools()
    },
    formatter,
    get instructions() {
      return setup.instructions()
    },
    system: setup.system,
    subAgentState,
    sessionInit,
    modelSettings: setup.modelSettings,
    client: setup.client,
    takeSteering: setup.takeSteering ?? noSteering,
    returnSteering: setup.returnSteering ?? (() => {}),
    output: setup.output,
  }
}

function noSteering(): (readonly UserContentPart[])[] {
  return []
}
