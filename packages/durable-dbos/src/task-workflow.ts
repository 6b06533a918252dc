import { DBOS } from '@dbos-inc/dbos-sdk'
import type { Agent, ContinueOptions, TaskOutcome } from '@kode/core'
import { SessionError, type SessionLease, type SessionStore } from '@kode/session'
import { runCancellable } from './cancellation.js'
import { DurableTaskError } from './errors.js'
import { lentStore } from './lent-store.js'
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
 * One execution of a task's workflow: take the session's writer (waiting while another holds it:
 * after a crash, until the dead worker's lease expired), read the history, then start the task,
 * carry it on from its history (`agent.continue`), or report it when it had already finished.
 * Two DBOS steps: the session's record count when the task first ran, and one that lasts while the
 * task runs to interrupt it when the workflow is cancelled (see `runCancellable`). Model calls and
 * tool results live in the history alone, which is the checkpoint.
 */
export async function executeTask(
  deps: TaskWorkflowDeps,
  task: DurableTask,
  workflowId: string,
): Promise<TaskOutcome> {
  const { store, agentFactory } = deps
  const { sessionId } = task
  const lease = await acquireWhenFree(store, sessionId, deps.lockRetryMs)
  try {
    const base = await DBOS.runStep(async () => (await store.info(sessionId))?.recordCount ?? 0, {
      name: 'kode.task.begin',
    })
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

/** Takes the session's writer, creating the session when it is new; waits while another holds it. */
async function acquireWhenFree(
  store: SessionStore,
  sessionId: string,
  retryMs: number,
): Promise<SessionLease> {
  try {
    await store.create({ id: sessionId })
  } catch (error) {
    if (!SessionError.is(error) || error.code !== 'session_exists') throw error
  }
  for (;;) {
    try {
      return await store.acquire(sessionId)
    } catch (error) {
      if (!SessionError.is(error) || error.code !== 'session_locked') throw error
    }
    await new Promise((resolve) => setTimeout(resolve, retryMs))
  }
}
