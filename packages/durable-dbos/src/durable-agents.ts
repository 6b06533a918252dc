import { DBOS, Error as DBOSErrors } from '@dbos-inc/dbos-sdk'
import type { ApprovalDecision, TaskOutcome, UserInput } from '@kode/core'
import { assertSessionId, type SessionStore } from '@kode/session'
import type { TSchema } from '@sinclair/typebox'
import { DurableTaskError } from './errors.js'
import { reapOnce } from './reaper.js'
import { reviveError } from './revive-error.js'
import { safeError } from './safe-error.js'
import { SESSION_ATTRIBUTE } from './session-turn.js'
import { resolveStoreRetry, type StoreRetryOptions } from './store-retry.js'
import { checkedApprovals, checkedInput, checkedInputSize } from './task-input.js'
import { checkedOutputs, type OutputSchemas, outputSchema } from './task-output.js'
import { type DurableTask, inputIdOf } from './task-plan.js'
import { type AgentFactory, executeTask } from './task-workflow.js'

/** Options of `createDurableAgents`. */
export interface DurableAgentsOptions {
  /**
   * Builds the agent of a task: `createAgent({ ...yours, store: context.store, sessionId:
   * context.sessionId })`. Called on the worker that runs the task, again on the one that carries
   * it on after a crash; attach event listeners here.
   */
  agentFactory: AgentFactory
  /**
   * Where the sessions live: a store every worker shares, with a writer lease that frees itself
   * when its holder dies (`createPostgresSessionStore`).
   */
  store: SessionStore
  /**
   * The structured-output schemas tasks may ask for, by name (`start(sessionId, input, { output:
   * name })`): TypeBox object schemas, as `agent.run(input, { output })` takes them. The workflow
   * records the name only, so every worker must declare the same `outputs`. Default: none.
   */
  outputs?: Readonly<Record<string, TSchema>> | undefined
  /** The DBOS workflow name of these tasks. Default `kode.task`; unique per `createDurableAgents`. */
  name?: string | undefined
  /**
   * A DBOS queue (registered by the host) to start tasks on, for concurrency limits; the reaper
   * resumes tasks on it too. Default: none.
   */
  queueName?: string | undefined
  /**
   * How often a task waiting for its session's writer tries again, or asks again whether its turn
   * on the session came, in ms. Default 250.
   */
  lockRetryMs?: number | undefined
  /**
   * The reaper leaves a pending workflow alone until it has seen it unchanged for this long, in ms
   * (default 10 000), so a task that has just started and not yet taken its session is never
   * taken from a live worker. Measured on the reaper's own clock from its first sight of the
   * workflow's current state (never compared with DBOS's times, which are the database's clock), so
   * a reaper's first sweep resumes nothing.
   */
  staleAfterMs?: number | undefined
  /** The clock the reaper measures that span with, in ms. Default `performance.now` (monotonic). */
  now?: (() => number) | undefined
  /**
   * How a task carries on when the store fails under its run in a way that may pass (the database
   * out of reach or failing over, a connection cut mid-append, the lease lost meanwhile): the
   * agent is closed, and after a wait the task is carried on from its history as after a crash,
   * under the same lease (taken again if it was lost). `maxAttempts` runs in all per execution
   * (default 6; 1 fails the task at the first failure), waits from `baseDelayMs` (default 1 000)
   * doubling up to `maxDelayMs` (default 30 000), half of each random. The store's refusals (a
   * record too large, a corrupt history) and failures that are not the store's fail the task at
   * once.
   */
  storeRetry?: StoreRetryOptions | undefined
}

/** How a task was started. */
export interface DurableTaskHandle {
  /** The DBOS workflow id: `status`, `result`, and DBOS's own tools take it. */
  workflowId: string
  sessionId: string
}

/** Options of `start` and `continue`. */
export interface StartOptions {
  /**
   * The workflow id (default: a new UUID). Starting again with an id that exists starts nothing
   * and returns that task: a request retried by the host cannot start a task twice. An id a task of
   * another session has is refused (`invalid_options`), after DBOS was asked, and so is one of
   * another workflow (other durable agents', under another `name`). Non-empty,
   * without NUL characters or lone surrogates (`invalid_options`): Postgres cannot keep those as they are.
   */
  workflowId?: string | undefined
  /**
   * The name of a schema of `DurableAgentsOptions.outputs` the task's final answer must satisfy,
   * as `agent.run(input, { output })` asks for one: `result()` then gives the validated value as
   * the outcome's `output`. A name not among `outputs` is refused (`invalid_options`) before
   * anything is recorded. Like `agent.run`'s, it belongs to the task: pass it again to `continue`
   * a structured task paused for approval.
   */
  output?: string | undefined
}

/** What `continue` takes. */
export interface DurableContinueOptions extends StartOptions {
  /** Decisions for calls awaiting approval, as `agent.continue({ approvals })` takes them. */
  approvals?: ApprovalDecision[] | undefined
}

/** A task's state, from DBOS. */
export interface DurableTaskStatus {
  workflowId: string
  sessionId: string
  /** DBOS's status: `ENQUEUED`, `PENDING` (running, or its worker died), `SUCCESS`, `ERROR`, `CANCELLED`, ... */
  status: string
  /** The executor running (or last running) it. */
  executorId: string | undefined
  /** The task's outcome once `status` is `SUCCESS`. */
  outcome: TaskOutcome | undefined
  /**
   * What the workflow threw once `status` is `ERROR` (a `DurableTaskError`, `AgentError` or
   * `SessionError` stays one).
   */
  error: unknown
  createdAt: number
  updatedAt: number | undefined
}

/** Durable tasks on DBOS (see `createDurableAgents`). */
export interface DurableAgents {
  /**
   * Starts a task with the user's input on a session (created when new); resolves once it is
   * recorded. An input that cannot run (not valid user input, or not JSON DBOS can record) is
   * refused with `DurableTaskError` `invalid_input` before anything is recorded or created, as is one
   * whose record would be over the store's `maxRecordBytes`; so is a
   * session id no store can keep, with `invalid_options` (its `SessionError` as the `cause`).
   */
  start(sessionId: string, input: UserInput, options?: StartOptions): Promise<DurableTaskHandle>
  /** Carries the session's task on (approvals, or a task that stopped), as a durable task. */
  continue(sessionId: string, options?: DurableContinueOptions): Promise<DurableTaskHandle>
  /** The task's state, or `undefined` for an id no task of these has. */
  status(workflowId: string): Promise<DurableTaskStatus | undefined>
  /**
   * Waits for the task's outcome, wherever it runs (polling DBOS every `pollingIntervalMs`,
   * default 1 000); rejects with what the workflow threw (a `DurableTaskError` stays one:
   * `task_superseded`, `session_deleted`, `wrong_session`; so do an `AgentError`, such as
   * `unknown_approval` for a `continue` whose decisions do not fit the history, and a
   * `SessionError`), or a `DurableTaskError` (`task_cancelled`) once the workflow was cancelled.
   */
  result(workflowId: string, options?: { pollingIntervalMs?: number | undefined }): Promise<TaskOutcome>
  /**
   * One sweep of the reaper: resumes the pending tasks whose worker died (their session has no
   * live writer) that earlier sweeps saw unchanged for `staleAfterMs`. Resolves with the resumed
   * workflow ids. The first sweep only looks: call it repeatedly, or use `startReaper`.
   */
  reap(): Promise<string[]>
  /**
   * Sweeps every `intervalMs` (default 5 000) until `stop()`. A failed sweep (the database out of
   * reach, the store closed) is reported to `onError`; by default it is logged, as an `Error` whose
   * `cause` is what the sweep threw (credentials redacted), through `DBOS.logger`: the logger DBOS
   * reports its own failures to, which the host configures (`logger`, `logLevel`). A reaper that
   * keeps failing resumes no task of a dead worker, so it is never silent on its own. What
   * `onError` throws is ignored.
   */
  startReaper(options?: {
    intervalMs?: number | undefined
    onError?: ((error: unknown) => void) | undefined
  }): {
    stop(): Promise<void>
  }
}

/**
 * Runs Kode tasks as DBOS Transact workflows, so a task survives the death of the worker running
 * it: DBOS records that the task exists and who runs it; the session history, written record by
 * record, is the only checkpoint of what it did (model calls are not journaled a second time).
 * Registers the workflow with DBOS: call it before the host's `DBOS.launch()`.
 */
export function createDurableAgents(options: DurableAgentsOptions): DurableAgents {
  const { store, agentFactory } = options
  if (typeof agentFactory !== 'function') {
    throw new DurableTaskError('invalid_options', 'createDurableAgents needs an agentFactory function')
  }
  const name = options.name ?? 'kode.task'
  const lockRetryMs = positive(options.lockRetryMs ?? 250, 'lockRetryMs')
  const staleAfterMs = positive(options.staleAfterMs ?? 10_000, 'staleAfterMs')
  const now = options.now ?? (() => performance.now())
  const outputs = checkedOutputs(options.outputs)
  const storeRetry = resolveStoreRetry(options.storeRetry)
  /** Workflows this process is running: never reaped by its own reaper. */
  const local = new Set<string>()
  /** What the reaper saw of pending workflows, sweep to sweep (see `reapOnce`). */
  const seen = new Map<string, { updatedAt: number; since: number }>()

  const workflow = DBOS.registerWorkflow(
    // The argument is checked inside (see `checkedTask`): another service may have enqueued it.
    async (task: DurableTask): Promise<TaskOutcome> => {
      const workflowId = DBOS.workflowID!
      local.add(workflowId)
      try {
        return await executeTask(
          { store, agentFactory, lockRetryMs, workflowName: name, outputs, storeRetry },
          task,
          workflowId,
        )
      } catch (error) {
        // DBOS stores and logs what a workflow throws: never the credentials it might carry.
        throw safeError(error)
      } finally {
        local.delete(workflowId)
      }
    },
    { name },
  )

  const sweepOnce = () =>
    reapOnce({ store, workflowName: name, local, staleAfterMs, now, seen, queueName: options.queueName })

  const own = async (workflowId: string) => {
    // An id no task can have (see `checkedWorkflowId`): Postgres would refuse it, or find another.
    if (!keepable(workflowId)) return undefined
    const status = await DBOS.getWorkflowStatus(workflowId)
    return status && status.workflowName === name ? status : undefined
  }

  /** Starts `task` as workflow `workflowId`; `given`: the id the host gave, if it gave one. */
  const begin = async (
    task: DurableTask,
    workflowId: string,
    given: string | undefined,
  ): Promise<DurableTaskHandle> => {
    const handle = await DBOS.startWorkflow(workflow, {
      workflowID: workflowId,
      // The session's tasks are found by it, to run in the order they were started.
      workflowAttributes: { [SESSION_ATTRIBUTE]: task.sessionId },
      ...(options.queueName !== undefined ? { queueName: options.queueName } : {}),
    })(task).catch((error: unknown) => {
      // The id is another workflow's (other durable agents', or not a Kode task at all).
      if (error instanceof DBOSErrors.DBOSConflictingWorkflowError) {
        throw new DurableTaskError(
          'invalid_options',
          `workflow ${given} is not a task of ${name}: give each task its own workflowId`,
          { cause: error },
        )
      }
      throw error
    })
    // DBOS hands back the task an id already has, whatever its input: one of another session is
    // a host's mistake, never this session's task (its outcome is another conversation's).
    if (given !== undefined) {
      const existing = (await own(given))?.input?.[0] as DurableTask | undefined
      if (existing !== undefined && existing.sessionId !== task.sessionId) {
        throw new DurableTaskError(
          'invalid_options',
          `workflow ${given} is a task of session ${existing.sessionId}, not one of session ${task.sessionId}: give each task its own workflowId`,
        )
      }
    }
    return { workflowId: handle.workflowID, sessionId: task.sessionId }
  }

  return {
    // Checked before DBOS records anything: a bad input fails the call, not the task.
    async start(sessionId, input, startOptions = {}) {
      checkedSessionId(sessionId)
      const { output, workflowId } = checkedOptions(startOptions, 'start')
      const task: DurableTask = { kind: 'run', sessionId, input: checkedInput(input) }
      if (output !== undefined) task.output = checkedOutput(outputs, output)
      const given = checkedWorkflowId(workflowId)
      const id = given ?? globalThis.crypto.randomUUID()
      // The input's record is the task's first append: one the store would refuse fails now.
      checkedInputSize(task.input, inputIdOf(id), store.maxRecordBytes)
      return begin(task, id, given)
    },
    async continue(sessionId, continueOptions = {}) {
      checkedSessionId(sessionId)
      const { approvals, output, workflowId } = checkedOptions(continueOptions, 'continue')
      const task: DurableTask = { kind: 'continue', sessionId }
      if (approvals !== undefined) task.approvals = checkedApprovals(approvals)
      if (output !== undefined) task.output = checkedOutput(outputs, output)
      const given = checkedWorkflowId(workflowId)
      return begin(task, given ?? globalThis.crypto.randomUUID(), given)
    },
    async status(workflowId) {
      const status = await own(workflowId)
      if (!status) return undefined
      const task = status.input?.[0] as DurableTask | undefined
      return {
        workflowId,
        sessionId: task?.sessionId ?? '',
        status: status.status,
        executorId: status.executorId,
        outcome: status.status === 'SUCCESS' ? (status.output as TaskOutcome) : undefined,
        error: reviveError(status.error),
        createdAt: status.createdAt,
        updatedAt: status.updatedAt,
      }
    },
    async result(workflowId, resultOptions = {}) {
      if (!(await own(workflowId))) {
        throw new DurableTaskError('unknown_task', `no task of workflow ${name} has the id ${workflowId}`)
      }
      const pollingIntervalMs = positive(
        checkedOptions(resultOptions, 'result').pollingIntervalMs ?? 1_000,
        'pollingIntervalMs',
      )
      try {
        return (await DBOS.retrieveWorkflow<TaskOutcome>(workflowId).getResult({
          pollingIntervalMs,
        })) as TaskOutcome
      } catch (error) {
        const status = (await DBOS.getWorkflowStatus(workflowId))?.status
        if (status === 'CANCELLED') {
          throw new DurableTaskError('task_cancelled', `task ${workflowId} was cancelled`, { cause: error })
        }
        if (status === 'MAX_RECOVERY_ATTEMPTS_EXCEEDED') {
          throw new DurableTaskError(
            'recovery_attempts_exceeded',
            `task ${workflowId} was started or recovered more times than DBOS allows, each execution ending with its worker; DBOS will not run it again (DBOS.resumeWorkflow runs it once more)`,
            { cause: error },
          )
        }
        throw reviveError(error)
      }
    },
    reap: sweepOnce,
    startReaper(reaperOptions = {}) {
      const intervalMs = positive(reaperOptions.intervalMs ?? 5_000, 'intervalMs')
      const onError =
        reaperOptions.onError ?? ((error: unknown) => DBOS.logger.error(sweepFailed(name, error)))
      let sweep: Promise<unknown> | undefined
      const timer = setInterval(() => {
        // A sweep slower than the interval is not stacked with the next.
        sweep ??= sweepOnce()
          .catch((error: unknown) => {
            // What `onError` throws (a logger that is down) must not become an unhandled
            // rejection, which ends a Node process: the next sweep tries again all the same.
            try {
              onError(error)
            } catch {}
          })
          .finally(() => {
            sweep = undefined
          })
      }, intervalMs)
      // The reaper must not keep a host process alive on its own.
      timer.unref?.()
      return {
        async stop() {
          clearInterval(timer)
          await sweep
        },
      }
    },
  }
}

/**
 * What the default `onError` of `startReaper` logs for a failed sweep: what it threw made safe to
 * log (see `safeError`), as the cause of an error that says which reaper failed.
 */
function sweepFailed(name: string, error: unknown): Error {
  const cause = safeError(error)
  const message = cause instanceof Error ? cause.message : String(cause)
  return new Error(`a reaper sweep of the ${name} tasks failed; the next sweep tries again: ${message}`, {
    cause,
  })
}

/**
 * A workflow id Postgres keeps as it is: it refuses a NUL in text, and pg sends a lone surrogate
 * as U+FFFD, so an execution after a crash would read back another id than the first one ran
 * under, and not find the input persisted under it (it would run the task again).
 */
function checkedWorkflowId(workflowId: unknown): string | undefined {
  if (workflowId === undefined) return undefined
  if (!keepable(workflowId)) {
    throw new DurableTaskError(
      'invalid_options',
      'workflowId must be a non-empty string without NUL characters or lone surrogates',
    )
  }
  return workflowId
}

function keepable(workflowId: unknown): workflowId is string {
  return (
    typeof workflowId === 'string' &&
    workflowId !== '' &&
    !workflowId.includes('\u0000') &&
    workflowId.isWellFormed()
  )
}

/**
 * A session id every store keeps (see `assertSessionId`), or `DurableTaskError` `invalid_options`
 * with the store's `SessionError` as its cause: a host's mistake in the call, refused as the other
 * unusable arguments of `start` and `continue` are, before DBOS records anything.
 */
function checkedSessionId(sessionId: unknown): asserts sessionId is string {
  try {
    assertSessionId(sessionId)
  } catch (cause) {
    throw new DurableTaskError('invalid_options', (cause as Error).message, { cause })
  }
}

/** A task's `output`: the name of one of `outputs`, recorded as the name (see `outputSchema`). */
function checkedOutput(outputs: OutputSchemas, output: unknown): string {
  outputSchema(outputs, output as string)
  return output as string
}

/** A call's options: an object (or left out), never `null` or a value of another kind. */
function checkedOptions<T extends object>(options: T, call: string): T {
  if (typeof options !== 'object' || options === null) {
    throw new DurableTaskError('invalid_options', `the options of ${call} must be an object`)
  }
  return options
}

function positive(value: number, option: string): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new DurableTaskError('invalid_options', `${option} must be a positive number of milliseconds`)
  }
  return value
}
