import { DBOS } from '@dbos-inc/dbos-sdk'
import type { Agent, ContinueOptions, TaskOutcome } from '@kode/core'
import { SessionError, type SessionLease, type SessionStore } from '@kode/session'
import type { TSchema } from '@sinclair/typebox'
import { inWatchStep, runCancellable } from './cancellation.js'
import { DurableTaskError } from './errors.js'
import { lentStore } from './lent-store.js'
import { safeError } from './safe-error.js'
import { BEGIN_STEP, isTurnOf } from './session-turn.js'
import { leaseLost, notingStore, passingStoreFailure } from './store-failures.js'
import { pause, type StoreRetryPolicy, storeRetryDelayMs } from './store-retry.js'
import { checkedTask } from './task-input.js'
import { type OutputSchemas, outputSchema } from './task-output.js'
import { type DurableTask, inputIdOf, planTask, type TaskPlan } from './task-plan.js'

/** What the host gives the factory of a task's agent. */
export interface AgentContext {
  /** The task's session: the agent must be bound to it (`createAgent({ sessionId })`). */
  readonly sessionId: string
  /**
   * The store the agent must use: the host's store, with the task's session lent to the agent
   * under the lease the workflow holds for the whole task.
   */
  readonly store: SessionStore
  /** The task's workflow id. */
  readonly workflowId: string
}

/** Builds the agent that runs one task (or carries it on after its worker died). */
export type AgentFactory = (context: AgentContext) => Agent | Promise<Agent>

/** What one execution of a task's workflow needs. */
export interface TaskWorkflowDeps {
  store: SessionStore
  agentFactory: AgentFactory
  lockRetryMs: number
  /** The DBOS workflow name of the tasks, to find the session's earlier ones (see `isTurnOf`). */
  workflowName: string
  /** The structured-output schemas tasks name. */
  outputs: OutputSchemas
  /** How a run the store failed under is carried on. */
  storeRetry: StoreRetryPolicy
}

/**
 * What the `kode.task.begin` step records: the session's record count and creation time when the
 * task first ran (before any of its records). Workflows begun by an earlier version recorded the
 * count alone.
 */
type Begun = { recordCount: number; createdAt: number } | number

/**
 * One execution of a task's workflow: take the session's writer (waiting while another holds it:
 * after a crash, until the dead worker's lease expired), read the history, then start the task,
 * carry it on from its history (`agent.continue`), or report it when it had already finished.
 * Two kinds of DBOS steps: `kode.task.begin`, which on the first execution creates the session when
 * it is new, takes its writer and records where the task begins, and `kode.task.watch`, which
 * lasts while the task runs to interrupt it when the workflow is cancelled (see `inWatchStep`).
 * A later execution (after a crash) waits for the writer, reads the history and builds the agent
 * inside the watch step too, so a cancel reaches it wherever it waits. Model calls and tool
 * results live in the history alone, which is the checkpoint. A store failure that may pass (see
 * `passingStoreFailure`) is taken as a crash of this execution alone: after a wait (`storeRetry`)
 * the task is carried on from its history, in the same step, by a new agent.
 */
export async function executeTask(
  deps: TaskWorkflowDeps,
  recorded: unknown,
  workflowId: string,
): Promise<TaskOutcome> {
  const { lockRetryMs, storeRetry } = deps
  /** What the store threw under this execution: its passing failures are retried. */
  const failures = new WeakSet<object>()
  const noted: TaskWorkflowDeps = { ...deps, store: notingStore(deps.store, failures) }
  const { store } = noted
  const task = checkedTask(recorded)
  const { sessionId } = task
  // Before anything is created: a worker without the schema the task names cannot run it.
  const output = outputSchema(deps.outputs, task.output)
  const begun = await begin(noted, task, workflowId)
  let { lease } = begun
  let prepared: Prepared | undefined
  const prepareOn = (held: SessionLease) => prepare(noted, task, workflowId, held, begun.base, output)
  try {
    // The first execution prepares outside any step: DBOS checks for a cancellation before it
    // begins the watch step, so a task cancelled while its agent was being built never starts.
    // A store failure that may pass is retried in the step.
    if (lease) {
      prepared = await prepareOn(lease).catch((error: unknown) => {
        if (passingStoreFailure(error, failures)) return undefined
        throw error
      })
    }
    if (prepared?.kind === 'finished') return prepared.outcome
    return await inWatchStep(async (cancel) => {
      for (let attempt = 1; ; attempt++) {
        try {
          lease ??= await resumeLease(store, sessionId, lockRetryMs, begun.createdAt, cancel)
          prepared ??= await prepareOn(lease)
          if (prepared.kind === 'finished') return prepared.outcome
          const { agent, plan } = prepared
          // The schema goes to the run and, after a crash, to its continuation alike: the answer
          // is checked (and corrected once) wherever the task ends.
          return await runCancellable(
            (signal) =>
              plan.kind === 'run'
                ? agent.run(plan.input, { signal, messageId: plan.messageId, output })
                : agent.continue(continueOptions(plan), { signal, output }),
            cancel,
          )
        } catch (error) {
          if (attempt >= storeRetry.maxAttempts || !passingStoreFailure(error, failures)) throw error
          // The store failed under the task: after a wait it is carried on from its history, as
          // after a crash, by a new agent (the failed one may hold what it could not write).
          const failed = prepared
          prepared = undefined
          if (failed?.kind === 'run') await failed.agent.close().catch(() => {})
          if (lease && leaseLost(error)) {
            const lost = lease
            lease = undefined
            await lost.release().catch(() => {})
          }
          await pause(storeRetryDelayMs(attempt, storeRetry), cancel)
        }
      }
    })
  } finally {
    // The lease is given back even when the agent's close fails: held, it would renew for ever.
    try {
      if (prepared?.kind === 'run') await prepared.agent.close()
    } finally {
      await lease?.release().catch(() => {})
    }
  }
}

/** What an execution found to do: the task's outcome, or a run on the agent built for it. */
type Prepared =
  | { kind: 'finished'; outcome: TaskOutcome }
  | { kind: 'run'; agent: Agent; plan: TaskPlan & { kind: 'run' | 'continue' } }

/** Reads the history under the lease, and builds the agent when there is something to run. */
async function prepare(
  deps: TaskWorkflowDeps,
  task: DurableTask,
  workflowId: string,
  lease: SessionLease,
  base: number,
  output: TSchema | undefined,
): Promise<Prepared> {
  const { store, agentFactory } = deps
  const { sessionId } = task
  const plan = planTask(task, await store.read(sessionId), base, inputIdOf(workflowId), output)
  if (plan.kind === 'finished') return plan
  const agent = await agentFactory({ sessionId, store: lentStore(store, lease), workflowId })
  if (typeof agent !== 'object' || agent === null || typeof agent.close !== 'function') {
    throw new DurableTaskError('invalid_options', `agentFactory returned ${describe(agent)}, not an agent`)
  }
  if (agent.sessionId !== sessionId) {
    await agent.close()
    throw new DurableTaskError(
      'wrong_session',
      `agentFactory returned an agent of session ${agent.sessionId} for a task of session ${sessionId}`,
    )
  }
  try {
    // The workflow created the session before the agent existed: record the model the agent
    // would have created it for.
    if ((await store.info(sessionId))?.model === undefined) {
      await store.update(sessionId, { model: agent.client.model, provider: agent.client.provider })
    }
  } catch (error) {
    await agent.close()
    throw error
  }
  return { kind: 'run', agent, plan }
}

/**
 * Takes the session's writer and the record count the task begins at. The first execution of a new
 * input's task creates the session when it is new (inside the step, so only before the task
 * began) and takes the writer; a later one finds the step recorded and no writer (`resumeLease`
 * takes it). A `continue` never creates its session: one that does not exist (deleted while its
 * calls awaited a decision) has nothing to carry on, and creating it would bring it back empty.
 */
async function begin(
  deps: TaskWorkflowDeps,
  task: DurableTask,
  workflowId: string,
): Promise<{ lease: SessionLease | undefined; base: number; createdAt: number | undefined }> {
  const { store, lockRetryMs } = deps
  const { sessionId } = task
  let lease: SessionLease | undefined
  try {
    const begun = await DBOS.runStep(
      async (): Promise<Begun> => {
        try {
          if (task.kind === 'run') await createIfNew(store, sessionId)
          // The session's earlier tasks that have not begun go first (see `isTurnOf`).
          const inTurn = () => isTurnOf(deps.workflowName, sessionId, workflowId)
          lease = await acquireWhenFree(
            store,
            sessionId,
            lockRetryMs,
            DBOS.stepStatus?.cancelSignal,
            inTurn,
          ).catch((error: unknown) => {
            throw SessionError.is(error) && error.code === 'session_not_found'
              ? missing(sessionId, error)
              : error
          })
          const info = await store.info(sessionId)
          if (!info) throw deleted(sessionId)
          return { recordCount: info.recordCount, createdAt: info.createdAt }
        } catch (error) {
          // DBOS stores a step's error as JSON: never the credentials it might carry.
          throw safeError(error)
        }
      },
      { name: BEGIN_STEP },
    )
    if (typeof begun === 'number') return { lease, base: begun, createdAt: undefined }
    return { lease, base: begun.recordCount, createdAt: begun.createdAt }
  } catch (error) {
    await lease?.release().catch(() => {})
    throw error
  }
}

/**
 * A later execution's writer: taken when free (waiting, until `cancel`, while the dead worker's
 * lease runs out or another task holds it), on the session the task began on, or `session_deleted`:
 * starting over on a new session would run again every tool call the lost history had recorded.
 */
async function resumeLease(
  store: SessionStore,
  sessionId: string,
  lockRetryMs: number,
  createdAt: number | undefined,
  cancel: AbortSignal | undefined,
): Promise<SessionLease> {
  const lease = await acquireWhenFree(store, sessionId, lockRetryMs, cancel).catch((error: unknown) => {
    throw SessionError.is(error) && error.code === 'session_not_found' ? deleted(sessionId, error) : error
  })
  // Deleted, then created again under the same id: not the session the task began on. (Workflows
  // begun by an earlier version recorded no creation time.)
  if (createdAt !== undefined && (await store.info(sessionId))?.createdAt !== createdAt) {
    await lease.release().catch(() => {})
    throw deleted(sessionId)
  }
  try {
    await subAgentWritersGone(store, sessionId, lockRetryMs, cancel)
  } catch (error) {
    await lease.release().catch(() => {})
    throw error
  }
  return lease
}

/**
 * Waits until no live writer holds a sub-agent session of the task's, at any depth. A worker that
 * died while a sub-agent ran held that session's lease too, renewed on a schedule of its own, so it
 * may run out after the task's: carrying the task on settles what the sub-agent left in its
 * session, which would fail on it. Only the task's writer writes its sub-agents' sessions, so a
 * live lease there is a dead (or paused) worker's; taking it fences that one off.
 */
async function subAgentWritersGone(
  store: SessionStore,
  sessionId: string,
  lockRetryMs: number,
  cancel: AbortSignal | undefined,
): Promise<void> {
  // Each session once: metadata written by hand could make a session its own ancestor.
  const seen = new Set([sessionId])
  const below = await subAgentsOf(store, sessionId, seen)
  for (let next = below.pop(); next !== undefined; next = below.pop()) {
    below.push(...(await subAgentsOf(store, next, seen)))
    const lease = await acquireWhenFree(store, next, lockRetryMs, cancel).catch((error: unknown) => {
      // Deleted meanwhile: nothing of it to settle.
      if (SessionError.is(error) && error.code === 'session_not_found') return undefined
      throw error
    })
    await lease?.release()
  }
}

/**
 * The ids of the sub-agent sessions `parentId` spawned that are not in `seen` yet; adds them. The
 * store is asked for the session's children only, and each is checked again: a store that ignores
 * the filter lists every session.
 */
async function subAgentsOf(store: SessionStore, parentId: string, seen: Set<string>): Promise<string[]> {
  const ids: string[] = []
  for (const info of await store.list({ parentSessionId: parentId })) {
    // A fork is a session of its own, written by its own tasks.
    if (info.subAgent === undefined || info.forkedFrom !== undefined || info.parentSessionId !== parentId)
      continue
    if (seen.has(info.id)) continue
    seen.add(info.id)
    ids.push(info.id)
  }
  return ids
}

function describe(value: unknown): string {
  return value === null ? 'null' : `a value of type ${typeof value}`
}

function missing(sessionId: string, cause: unknown): DurableTaskError {
  return new DurableTaskError(
    'session_deleted',
    `session ${sessionId} does not exist (it was deleted, or never created): there is no task to carry on`,
    { cause },
  )
}

function deleted(sessionId: string, cause?: unknown): DurableTaskError {
  return new DurableTaskError(
    'session_deleted',
    `session ${sessionId} was deleted after its task began: the task cannot be carried on`,
    { cause },
  )
}

/** What `agent.continue` takes for a plan: the decisions, and the input whose task it carries on. */
function continueOptions(plan: TaskPlan & { kind: 'continue' }): ContinueOptions {
  const options: ContinueOptions = {}
  if (plan.approvals) options.approvals = plan.approvals
  if (plan.inputId !== undefined) options.inputId = plan.inputId
  return options
}

/** Creates the session unless it exists. */
async function createIfNew(store: SessionStore, sessionId: string): Promise<void> {
  try {
    await store.create({ id: sessionId })
  } catch (error) {
    if (!SessionError.is(error) || error.code !== 'session_exists') throw error
  }
}

/**
 * Takes the session's writer; waits while another holds it, until `signal` (the workflow's
 * cancellation) aborts the wait. With `inTurn`, also while it says another task goes first: the
 * writer is given back, and asked for again once `inTurn` says so without it (asked while holding
 * the writer, as the final word). Waiting for its turn without the writer, a task never keeps the
 * earlier task from taking it, however many tasks wait.
 */
async function acquireWhenFree(
  store: SessionStore,
  sessionId: string,
  retryMs: number,
  signal?: AbortSignal,
  inTurn?: () => Promise<boolean>,
): Promise<SessionLease> {
  const pause = () => new Promise((resolve) => setTimeout(resolve, retryMs))
  for (;;) {
    signal?.throwIfAborted()
    let taken = false
    try {
      const lease = await store.acquire(sessionId)
      try {
        taken = inTurn === undefined || (await inTurn())
      } finally {
        if (!taken) await lease.release()
      }
      if (taken) return lease
    } catch (error) {
      if (!SessionError.is(error) || error.code !== 'session_locked') throw error
    }
    await pause()
    if (inTurn === undefined || taken) continue
    // Not its turn: it waits for it without the writer.
    while (!(await inTurn())) {
      signal?.throwIfAborted()
      await pause()
    }
  }
}
