import type { Event, EventOf, EventType, HistoryEvent, UserContentPart } from '@kode/protocol'
import type { LLMClient } from '@kode/providers'
import { assertSessionId, SessionError } from '@kode/session'
import { EventEmitter } from 'eventemitter3'
import { AgentError } from '../errors.js'
import type { FormatterInstructions, HistoryFormatter } from '../formatters/history-formatter.js'
import { nativeFormatter } from '../formatters/native.js'
import { checkModelSettings, type ModelSettings, mergeModelSettings } from '../settings/model-settings.js'
import { Journal } from '../task/journal.js'
import { runTask, type TaskStart } from '../task/run-task.js'
import { type HostFailure, type TaskRuntime, type ToolSet, toolSet } from '../task/runtime.js'
import { TaskEvents } from '../task/task-events.js'
import { type UserInput, validateUserInput } from '../task/user-input.js'
import type { ApprovalDecision } from '../tools/approval.js'
import type { Tool } from '../tools/define-tool.js'
import { errorMessageOf } from '../tools/execute-tool-call.js'
import { type AgentRun, RunChannel } from './agent-run.js'
import { type AgentOptions, checkToolNames, resolveSettings } from './options.js'

/** The emitter's channels: `event` for every event, and one per event type. */
export type AgentEventMap = { event: [event: Event] } & { [T in EventType]: [event: EventOf<T>] }

/** Per-run options. */
export interface RunOptions {
  /** Aborting it interrupts the task (see "Interrupts" in docs/agents.md). */
  signal?: AbortSignal
  /** This run's model settings, over the agent's field by field. */
  modelSettings?: ModelSettings
}

/** What `agent.continue` takes; `signal` and `modelSettings` may also come as the second argument. */
export interface ContinueOptions extends RunOptions {
  /** One decision per call awaiting approval. */
  approvals?: readonly ApprovalDecision[]
}

/** An agent bound to one session. Runs one task at a time. */
export interface Agent {
  /** The agent's session (new, or the one given to resume). */
  readonly sessionId: string
  /** The client the next model call uses. */
  readonly client: LLMClient
  /** Every event of every run (sub-agents' included), delivered synchronously as produced. */
  readonly events: EventEmitter<AgentEventMap>
  /** Whether a task is running. */
  readonly running: boolean
  /**
   * Starts a task with the user's input and returns its events and outcome. The task starts at
   * once, whether or not the run is iterated. Throws `AgentError` (`agent_busy`) while another
   * task runs, and a `CodecError` for input the history cannot hold.
   */
  run(input: UserInput, options?: RunOptions): AgentRun
  /**
   * Carries the session's paused task on: with `approvals`, a decision for every call that awaits
   * one (`TaskOutcome.pendingApprovals`), recorded in the history; approved calls run once, denied
   * ones get an `error` result (`denied by the user: <reason>`), and the loop goes on. Without
   * pending approvals, it carries on a task whose process stopped before it finished (the history
   * is the checkpoint). Works from any process on the same store. Throws `AgentError`
   * (`agent_busy`) while a task runs; decisions that do not fit the history (`unknown_approval`,
   * `approval_already_decided`, `approvals_missing`) or a session with nothing to carry on
   * (`nothing_to_continue`) reject the run's `done` and its iteration, before any event.
   */
  continue(options?: ContinueOptions, runOptions?: RunOptions): AgentRun
  /**
   * Queues a user message for the running task, delivered at the next turn boundary (after the
   * tool results, before the next model call); if the model has just answered, it starts another
   * turn. Queued while idle, it is delivered right after the next run's input.
   */
  steer(input: UserInput): void
  /** Uses another client (model or provider) from the next model call on. */
  setClient(client: LLMClient): void
  /**
   * Offers other tools from the next model call on (a running task picks them up between turns),
   * for tool sets that change while the agent lives, such as an MCP server's. Throws `AgentError`
   * (`invalid_options`) for what `createAgent` would refuse (two tools with one name...).
   */
  setTools(tools: readonly Tool[]): void
  /** The session's history as persisted (empty before the first run of a new session). */
  history(): Promise<HistoryEvent[]>
}

/**
 * Creates an agent over a client, tools, a system prompt and a session store. Throws
 * `AgentError` (`invalid_options`) for unusable limits, duplicate tool names or tools the history
 * formatter cannot work with, and a `SessionError` for an invalid `sessionId`.
 */
export function createAgent(options: AgentOptions): Agent {
  const settings = resolveSettings(options)
  checkModelSettings(options.modelSettings)
  const formatter = options.historyFormatter ?? nativeFormatter()
  let { tooling, instructions } = prepareTools(options.tools ?? [], formatter)
  if (options.sessionId !== undefined) assertSessionId(options.sessionId)
  const sessionId = options.sessionId ?? settings.createId()
  const { store, system } = options
  const journal = new Journal(store, sessionId, formatter, instructions)
  const events = new EventEmitter<AgentEventMap>()
  const steering: UserContentPart[][] = []
  let client = options.client
  let running = false

  const start = (task: TaskStart, runOptions: RunOptions): AgentRun => {
    running = true
    const controller = new AbortController()
    const external = runOptions.signal
    const forward = () => controller.abort(external?.reason)
    if (external?.aborted) forward()
    else external?.addEventListener('abort', forward, { once: true })
    const channel = new RunChannel(sessionId, () => controller.abort())
    let listenerFailure: { error: unknown } | undefined
    let hostFailure: HostFailure | undefined
    // A host's bug (a throwing listener or hook): stop the task as a failure (not as an
    // interrupt: the user did not interrupt), let it end cleanly, then fail the run with the error.
    const failHost = (error: unknown, message: string) => {
      listenerFailure ??= { error }
      if (!controller.signal.aborted) {
        hostFailure = { message }
        controller.abort(error)
      }
    }
    const sink = (event: Event) => {
      channel.push(event)
      try {
        events.emit('event', event)
        ;(events.emit as (type: string, event: Event) => boolean)(event.type, event)
      } catch (error) {
        failHost(error, `An event listener threw: ${errorMessageOf(error)}`)
      }
    }
    const rt: TaskRuntime = {
      sessionId,
      signal: controller.signal,
      hostFailure: () => hostFailure,
      settings,
      store,
      journal,
      events: new TaskEvents(sessionId, settings.now, sink),
      sink,
      get tools() {
        return tooling
      },
      formatter,
      get instructions() {
        return instructions
      },
      system,
      subAgentState: undefined,
      sessionInit: { model: client.model, provider: client.provider },
      hooks: options.hooks ?? {},
      failHost,
      modelSettings: mergeModelSettings(options.modelSettings, runOptions.modelSettings),
      client: () => client,
      takeSteering: () => steering.splice(0),
    }
    const settle = () => {
      running = false
      external?.removeEventListener('abort', forward)
    }
    runTask(rt, task).then(
      (outcome) => {
        settle()
        if (listenerFailure) channel.fail(listenerFailure.error)
        else channel.finish(outcome)
      },
      (error: unknown) => {
        controller.abort(error)
        rt.events.abandon(error)
        settle()
        channel.fail(error)
      },
    )
    return channel
  }

  const run = (input: UserInput, runOptions: RunOptions = {}): AgentRun => {
    if (running) throw new AgentError('agent_busy', `a task is already running in session ${sessionId}`)
    const parts = validateUserInput(input)
    checkModelSettings(runOptions.modelSettings)
    return start({ kind: 'input', parts }, runOptions)
  }

  const carryOn = (options: ContinueOptions = {}, runOptions: RunOptions = {}): AgentRun => {
    if (running) throw new AgentError('agent_busy', `a task is already running in session ${sessionId}`)
    const merged: RunOptions = { ...options, ...runOptions }
    checkModelSettings(merged.modelSettings)
    return start({ kind: 'continue', approvals: options.approvals }, merged)
  }

  return {
    sessionId,
    get client() {
      return client
    },
    events,
    get running() {
      return running
    },
    run,
    continue: carryOn,
    steer(input) {
      steering.push(validateUserInput(input))
    },
    setClient(next) {
      client = next
    },
    setTools(next) {
      ;({ tooling, instructions } = prepareTools(next, formatter))
      journal.setInstructions(instructions)
    },
    async history() {
      try {
        return await store.read(sessionId)
      } catch (error) {
        if (SessionError.is(error) && error.code === 'session_not_found') return []
        throw error
      }
    },
  }
}

/** Checks tools as `createAgent` does and builds what the model is offered with them. */
function prepareTools(
  tools: readonly Tool[],
  formatter: HistoryFormatter,
): { tooling: ToolSet; instructions: FormatterInstructions } {
  checkToolNames(tools)
  const tooling = toolSet(tools)
  return { tooling, instructions: formatter.instructions(tooling.definitions ?? []) }
}
