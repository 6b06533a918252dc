import type { Event, EventOf, EventType, HistoryEvent, UserContentPart } from '@kode/protocol'
import type { LLMClient, LLMRequest } from '@kode/providers'
import { assertSessionId, SessionError } from '@kode/session'
import type { Static, TSchema } from '@sinclair/typebox'
import { EventEmitter } from 'eventemitter3'
import { measureBudget } from '../compaction/budget.js'
import { type CompactionResult, compact } from '../compaction/compact.js'
import { resolveCompaction } from '../compaction/options.js'
import { AgentError } from '../errors.js'
import type { FormatterInstructions, HistoryFormatter } from '../formatters/history-formatter.js'
import { nativeFormatter } from '../formatters/native.js'
import { outputSpec } from '../output/output-spec.js'
import {
  checkModelSettings,
  checkToolChoice,
  type ModelSettings,
  mergeModelSettings,
  withModelSettings,
} from '../settings/model-settings.js'
import { checkSubAgentFormatters } from '../sub-agents/inherited-formatter.js'
import { runSubAgent } from '../sub-agents/run-sub-agent.js'
import { AbortListeners } from '../task/abort-listeners.js'
import { type ApprovalDecision, takeDecisions } from '../task/approval.js'
import { Journal } from '../task/journal.js'
import { hookedRequest } from '../task/model-hook.js'
import { runTask, type TaskStart } from '../task/run-task.js'
import { createTaskRuntime, type HostFailure } from '../task/runtime.js'
import { SubAgentReads } from '../task/sub-agent-reads.js'
import { TaskEvents } from '../task/task-events.js'
import { checkInputSize, type UserInput, validateUserInput, validateUserMessage } from '../task/user-input.js'
import { thrownText } from '../thrown-text.js'
import type { Tool } from '../tools/define-tool.js'
import { checkToolNames, type ToolSet, toolSet } from '../tools/tool-set.js'
import { type AgentRun, RunChannel } from './agent-run.js'
import { agentBusy, agentClosed } from './misuse.js'
import { type AgentOptions, resolveSettings } from './options.js'
import { checkRequiredOptions } from './required-options.js'

/** The emitter's channels: `event` for every event, and one per event type. */
export type AgentEventMap = { event: [event: Event] } & { [T in EventType]: [event: EventOf<T>] }

/** Per-run options. `S` is the type of the `output` schema, when one is given. */
export interface RunOptions<S extends TSchema | undefined = TSchema | undefined> {
  /** Aborting it interrupts the task (see "Interrupts" in docs/agents.md). */
  signal?: AbortSignal | undefined
  /** This run's model settings, over the agent's field by field. */
  modelSettings?: ModelSettings | undefined
  /**
   * Structured final output: a TypeBox object schema the final answer must satisfy. Each api's
   * native mechanism asks for it (see "Structured output" in docs/agents.md); the answer is
   * validated, given one corrective turn when it does not validate, and resolved as
   * `(await run.done).output`, typed `Static<typeof schema>`. An answer that still does not
   * validate ends the task with reason `structured_output_invalid`. Not kept across runs: pass it
   * again to `continue` a task paused for approval.
   */
  output?: S
}

/** The type `run` resolves `output` with: `Static<S>` for a schema, `undefined` without. */
export type OutputOf<S> = S extends TSchema ? Static<S> : undefined

/** Options of {@link Agent.run}: the run's options, and the user message's mode. */
export interface RunInputOptions<S extends TSchema | undefined = TSchema | undefined> extends RunOptions<S> {
  /**
   * Marks the user message as a request of a host-defined mode (the CLI's `koding`): persisted on
   * the message, on its `user_message` event and in replay, and shown to the model as a tagged
   * block before the text (see "User message modes" in docs/agents.md). A non-empty string.
   */
  mode?: string | undefined
  /** Context for the mode (what the mode should know), sent inside the mode's block. Needs `mode`. */
  modeContext?: string | undefined
  /**
   * The id of the user message the run persists (default: a new id from `createId`), so that a
   * host can find the task's records in the history later: a durable runner tells, after a crash,
   * whether its task had begun and which records are its own. A non-empty string that no record of
   * the session has yet; a taken id fails the run before anything is persisted (`AgentError`,
   * `invalid_options`).
   */
  messageId?: string | undefined
}

/** Options of {@link Agent.compact}. */
export interface CompactOptions {
  /** Aborting it stops the summary: no `compaction` record is persisted, only the attempt's `interrupt` marker. */
  signal?: AbortSignal | undefined
}

/** What `agent.continue` takes; `signal` and `modelSettings` may also come as the second argument. */
export interface ContinueOptions<S extends TSchema | undefined = TSchema | undefined> extends RunOptions<S> {
  /** One decision per call awaiting approval. */
  approvals?: readonly ApprovalDecision[] | undefined
  /**
   * The id of the user message whose task this carries on (the `messageId` its `run` was given):
   * the continued task's `task_metadata` names it (`inputId`), as that run's own end would have,
   * so a host that looks for the task's end after a crash finds it whatever messages came in
   * meanwhile (steering, a structured-output correction). A non-empty string (`AgentError`
   * `invalid_options` at the call otherwise) that is the id of a user message of the session (the
   * run's `done` rejects with `invalid_options` otherwise, before anything is persisted).
   */
  inputId?: string | undefined
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
  run<S extends TSchema | undefined = undefined>(
    input: UserInput,
    options?: RunInputOptions<S>,
  ): AgentRun<OutputOf<S>>
  /**
   * Carries the session's paused task on: with `approvals`, a decision for every call that awaits
   * one (`TaskOutcome.pendingApprovals`), recorded in the history; approved calls run once, denied
   * ones get an `error` result (`denied by the user: <reason>`), and the loop goes on. Without
   * pending approvals, it carries on a task whose process stopped before it finished (the history
   * is the checkpoint). Works from any process on the same store. Throws `AgentError`
   * (`agent_busy`) while a task runs; decisions that do not fit the history (`unknown_approval`,
   * `approval_already_decided`, `approvals_missing`) or a session with nothing to carry on
   * (`nothing_to_continue`) reject the run's `done` and its iteration, before any event. A session
   * the store does not have is not created: the store's `SessionError` (`session_not_found`)
   * rejects them the same way.
   */
  continue<S extends TSchema | undefined = undefined>(
    options?: ContinueOptions<S>,
    runOptions?: RunOptions<S>,
  ): AgentRun<OutputOf<S>>
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
  /**
   * Ends the agent: interrupts a running task (or `compact`) and resolves once it has persisted and
   * given the session's writer back (its lease released; the file store's lock file removed), so another
   * store or process can write the session. The store stays open, since it may serve other
   * agents: close a store you made for this agent alone with `store.close()`. A later `run`
   * throws `AgentError` (`agent_closed`); `history()` still reads. Calling it again does nothing.
   */
  close(): Promise<void>
  /**
   * Compacts the session now, between tasks: the older part is summarised and a `compaction`
   * record persisted (events `compaction_start` / `compaction_end` on the emitter), with the
   * agent's `compaction` options (their defaults when compaction is off). Resolves with what
   * happened; a failed or interrupted summary changes what the model sees in nothing (`close`
   * interrupts it too). Throws `AgentError` (`agent_busy`) while a task runs, what the store
   * throws, and what an event listener threw (after `compaction_end`, as a run does). A session the store does not have (an agent that
   * never ran) has nothing to compact: `nothing_to_compact`, and none is created.
   */
  compact(options?: CompactOptions): Promise<CompactionResult>
}

/**
 * Creates an agent over a client, tools, a system prompt and a session store. Throws
 * `AgentError` (`invalid_options`) for unusable limits, duplicate tool names or tools the history
 * formatter cannot work with, and a `SessionError` for an invalid `sessionId`.
 */
export function createAgent(options: AgentOptions): Agent {
  checkRequiredOptions(options)
  const settings = resolveSettings(options)
  checkModelSettings(options.modelSettings)
  const formatter = options.historyFormatter ?? nativeFormatter()
  let { tooling, instructions } = prepareTools(options.tools ?? [], formatter)
  if (options.sessionId !== undefined) assertSessionId(options.sessionId)
  const sessionId = options.sessionId ?? settings.createId()
  const { store, system } = options
  const hooks = options.hooks ?? {}
  const journal = new Journal(store, sessionId, formatter, instructions, options.sessionId === undefined)
  const events = new EventEmitter<AgentEventMap>()
  const steering: UserContentPart[][] = []
  let client = options.client
  let running = false
  let current: RunChannel | undefined
  /** The `compact()` in progress: `close` interrupts it and waits until its writer is given back. */
  let compacting: { interrupt: () => void; done: Promise<unknown> } | undefined
  let closing: Promise<void> | undefined

  // The tools a `toolChoice` may name: those the model is offered now (`setTools` changes them).
  const offered = () => (instructions.tools ?? []).map((tool) => tool.name)
  const agentSettings = options.modelSettings

  const start = (task: TaskStart, runOptions: RunOptions): AgentRun => {
    running = true
    const controller = new AbortController()
    const external = runOptions.signal
    const forward = () => controller.abort(external?.reason)
    if (external?.aborted) forward()
    else external?.addEventListener('abort', forward, { once: true })
    const channel = new RunChannel(sessionId, () => controller.abort())
    current = channel
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
        emitOn(events, event)
      } catch (error) {
        failHost(error, `An event listener threw: ${thrownText(error)}`)
      }
    }
    const scope = {
      store,
      sink,
      hooks,
      hostFailure: () => hostFailure,
      failHost,
      runSubAgent,
      subAgentReads: new SubAgentReads(),
    }
    const rt = createTaskRuntime(scope, {
      sessionId,
      signal: controller.signal,
      settings,
      formatter,
      tools: () => tooling,
      instructions: () => instructions,
      output: runOptions.output ? outputSpec(runOptions.output) : undefined,
      client: () => client,
      system,
      modelSettings: mergeModelSettings(options.modelSettings, runOptions.modelSettings),
      journal,
      takeSteering: () => steering.splice(0),
      returnSteering: (messages) => steering.unshift(...messages.map((parts) => [...parts])),
    })
    const settle = () => {
      running = false
      current = undefined
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

  // The outcome's `output` is the schema's value: validated before it is set (see FinalAnswer).
  const run = <S extends TSchema | undefined = undefined>(
    input: UserInput,
    runOptions: RunInputOptions<S> = {},
  ): AgentRun<OutputOf<S>> => {
    if (closing) throw agentClosed(sessionId)
    if (running) throw agentBusy(sessionId)
    const { parts, mode } = validateUserMessage(input, runOptions)
    const { messageId } = runOptions
    if (messageId !== undefined && (typeof messageId !== 'string' || messageId === '')) {
      throw new AgentError('invalid_options', 'messageId must be a non-empty string')
    }
    checkModelSettings(runOptions.modelSettings)
    checkToolChoice(mergeModelSettings(agentSettings, runOptions.modelSettings), offered())
    if (runOptions.output !== undefined) outputSpec(runOptions.output)
    checkInputSize(mode === undefined ? { parts } : { parts, mode }, messageId, store.maxRecordBytes)
    return start({ kind: 'input', parts, mode, messageId }, runOptions) as AgentRun<OutputOf<S>>
  }

  const carryOn = <S extends TSchema | undefined = undefined>(
    options: ContinueOptions<S> = {},
    runOptions: RunOptions<S> = {},
  ): AgentRun<OutputOf<S>> => {
    if (closing) throw agentClosed(sessionId)
    if (running) throw agentBusy(sessionId)
    const merged: RunOptions = { ...options, ...runOptions }
    const { inputId } = options
    if (inputId !== undefined && (typeof inputId !== 'string' || inputId === '')) {
      throw new AgentError('invalid_options', 'inputId must be a non-empty string')
    }
    checkModelSettings(merged.modelSettings)
    checkToolChoice(mergeModelSettings(agentSettings, merged.modelSettings), offered())
    if (merged.output !== undefined) outputSpec(merged.output)
    // Taken as they are now; the task checks them (see `takeDecisions`).
    const { approvals } = options
    const taken = Array.isArray(approvals) ? takeDecisions(approvals) : approvals
    return start(
      { kind: 'continue', approvals: taken as ApprovalDecision[] | undefined, inputId },
      merged,
    ) as AgentRun<OutputOf<S>>
  }

  /** One manual compaction, holding the session's writer until it ends. */
  const compactNow = async (controller: AbortController): Promise<CompactionResult> => {
    const { signal } = controller
    // A host's bug stops the compaction as a failed one, with its message (never as an interrupt):
    // a beforeModelCall hook that throws on the summary request, or a listener that throws.
    let hostFailure: HostFailure | undefined
    const failHost = (message: string) => {
      if (signal.aborted) return
      hostFailure = { message }
      controller.abort()
    }
    const hookScope = {
      hooks,
      sessionId,
      signal,
      aborts: new AbortListeners(signal),
      failHost: (_error: unknown, message: string) => failHost(message),
    }
    // As for a task, the sequence still ends well formed, then compact() rejects with the error.
    let listenerFailure: { error: unknown } | undefined
    const sink = (event: Event) => {
      try {
        emitOn(events, event)
      } catch (error) {
        listenerFailure ??= { error }
        failHost(`An event listener threw: ${thrownText(error)}`)
      }
    }
    const compactionEvents = new TaskEvents(sessionId, settings.now, sink)
    try {
      // A session that does not exist yet has nothing to summarise: compacting creates none.
      try {
        await journal.open(undefined)
      } catch (error) {
        if (SessionError.is(error) && error.code === 'session_not_found')
          return { compacted: false, reason: 'nothing_to_compact' }
        throw error
      }
      // The request a task would send now: its output reserve (the agent's maxOutputTokens) sets
      // the limit, so the kept part leaves the next task under its threshold.
      const next: LLMRequest = { messages: journal.providerMessages(), tools: instructions.tools }
      if (instructions.system !== undefined) next.system = instructions.system
      const request = withModelSettings(next, mergeModelSettings(agentSettings, undefined))
      const budget = measureBudget(
        request,
        journal.modelRecords,
        journal.freshFrom,
        client,
        settings.estimator,
      )
      const result = await compact(
        {
          journal,
          events: compactionEvents,
          settings,
          compaction: settings.compaction ?? resolveCompaction(undefined)!,
          client,
          signal,
          instructionTokens: settings.estimator.instructions(instructions.system, instructions.tools),
          hostFailure: () => hostFailure,
          prepare: (summary) => hookedRequest(hookScope, summary),
          providerOptions: agentSettings?.providerOptions,
        },
        'manual',
        budget,
      )
      if (listenerFailure) throw listenerFailure.error
      return result
    } catch (error) {
      // A store that failed mid-compaction: its compaction_start still gets its compaction_end.
      if (error !== listenerFailure?.error) compactionEvents.abandon(error)
      throw error
    } finally {
      await journal.close().catch(() => {})
    }
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
      const parts = validateUserInput(input)
      checkInputSize({ parts }, undefined, store.maxRecordBytes)
      steering.push(parts)
    },
    setClient(next) {
      client = next
    },
    setTools(next) {
      ;({ tooling, instructions } = prepareTools(next, formatter))
      journal.setInstructions(instructions)
    },
    async compact(compactOptions = {}) {
      if (closing) throw agentClosed(sessionId)
      if (running) throw agentBusy(sessionId)
      running = true
      const controller = new AbortController()
      const external = compactOptions.signal
      const forward = () => controller.abort(external?.reason)
      if (external?.aborted) forward()
      else external?.addEventListener('abort', forward, { once: true })
      const done = compactNow(controller)
      compacting = { interrupt: () => controller.abort(), done }
      try {
        return await done
      } finally {
        compacting = undefined
        external?.removeEventListener('abort', forward)
        running = false
      }
    },
    async history() {
      try {
        return await store.read(sessionId)
      } catch (error) {
        if (SessionError.is(error) && error.code === 'session_not_found') return []
        throw error
      }
    },
    close() {
      closing ??= (async () => {
        const task = current
        if (task) {
          task.interrupt()
          // How the task ended is the run's to report; close only waits for it to be persisted.
          await task.done.catch(() => undefined)
        }
        const compaction = compacting
        if (compaction) {
          compaction.interrupt()
          await compaction.done.catch(() => undefined)
        }
      })()
      return closing
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
  const instructions = formatter.instructions(tooling.definitions ?? [])
  checkSubAgentFormatters(tools, formatter)
  return { tooling, instructions }
}

/**
 * Emits `event` on the agent's emitter: on `event`, then on its type. An emitter nobody listens
 * to is skipped (eventemitter3 counts its channels with listeners in `_eventsCount`; `emit`
 * allocates its `arguments` on every call): an emitter without that count is always called.
 */
function emitOn(events: EventEmitter<AgentEventMap>, event: Event): void {
  if ((events as { _eventsCount?: number })._eventsCount === 0) return
  events.emit('event', event)
  ;(events.emit as (type: string, event: Event) => boolean)(event.type, event)
}
