import { DBOS } from '@dbos-inc/dbos-sdk'
import type { Agent, ContinueOptions, TaskOutcome } from '@kode/core'
import { SessionError, type SessionLease, type SessionStore } from '@kode/session'
import { runCancellable } from './cancellation.js'
import { DurableTaskError } from './errors.js'
import { lentStore } from './lent-store.js'
import { safeError } from './safe-error.js'
import { type DurableTask, planTask, type TaskPlan } from './task-plan.js'

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
 * Two DBOS steps: `kode.task.begin`, which on the first execution creates the session when it is
 * new, takes its writer and records where the task begins, and one that lasts while the task runs
 * to interrupt it when the workflow is cancelled (see `runCancellable`). Model calls and tool
 * results live in the history alone, which is the checkpoint.
 */
export async function executeTask(
  deps: TaskWorkflowDeps,
  task: DurableTask,
  workflowId: string,
): Promise<TaskOutcome> {
  const { store, agentFactory } = deps
  const { sessionId } = task
  const { lease, base } = await begin(deps, sessionId)
  try {
    const plan = planTask(task, await store.read(sessionId), base, inputIdOf(workflowId))
    if (plan.kind === 'finished') return plan.outcome
    const agent = await agentFactory({ sessionId, store: lentStore(store, lease), workflowId })
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
      return await runCancellable((signal) =>
        plan.kind === 'run'
          ? agent.run(plan.input, { signal, messageId: plan.messageId })
          : agent.continue(continueOptions(plan), { signal }),
      )
    } finally {
      await agent.close()
    }
  } finally {
    await lease.release().catch(() => {})
  }
}

/**
 * Takes the session's writer and the record count the task begins at. The first execution creates
 * the session when it is new (inside the step, so only before the task began); a later one finds
 * the session the task began on, or fails with `session_deleted`: starting over on a new session
 * would run again every tool call the lost history had recorded.
 */
async function begin(
  deps: TaskWorkflowDeps,
  sessionId: string,
): Promise<{ lease: SessionLease; base: number }> {
  const { store, lockRetryMs } = deps
  let lease: SessionLease | undefined
  try {
    const begun = await DBOS.runStep(
      async (): Promise<Begun> => {
        try {
          await createIfNew(store, sessionId)
          lease = await acquireWhenFree(store, sessionId, lockRetryMs, DBOS.stepStatus?.cancelSignal)
          const info = await store.info(sessionId)
          if (!info) throw deleted(sessionId)
          return { recordCount: info.recordCount, createdAt: info.createdAt }
        } catch (error) {
          // DBOS stores a step's error as JSON: never the credentials it might carry.
          throw safeError(error)
        }
      },
      { name: 'kode.task.begin' },
    )
    // Recorded by an earlier execution: the step did not run again.
    lease ??= await acquireWhenFree(store, sessionId, lockRetryMs).catch((error: unknown) => {
      throw SessionError.is(error) && error.code === 'session_not_found' ? deleted(sessionId, error) : error
    })
    if (typeof begun === 'number') return { lease, base: begun }
    // Deleted, then created again under the same id: not the session the task began on.
    if ((await store.info(sessionId))?.createdAt !== begun.createdAt) throw deleted(sessionId)
    return { lease, base: begun.recordCount }
  } catch (error) {
    await lease?.release().catch(() => {})
    throw error
  }
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

/**
 * The id a task's input is persisted under: the workflow's, so that every execution of it finds
 * the same message, and no other task's.
 */
function inputIdOf(workflowId: string): string {
  return `${workflowId}:input`
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
 * cancellation) aborts the wait.
 */
async function acquireWhenFree(
  store: SessionStore,
  sessionId: string,
  retryMs: number,
  signal?: AbortSignal,
): Promise<SessionLease> {
  for (;;) {
    signal?.throwIfAborted()
    try {
      return await store.acquire(sessionId)
    } catch (error) {
      if (!SessionError.is(error) || error.code !== 'session_locked') throw error
    }
    await new Promise((resolve) => setTimeout(resolve, retryMs))
  }
}
