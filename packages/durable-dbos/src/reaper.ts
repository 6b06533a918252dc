import { DBOS, type WorkflowStatus } from '@dbos-inc/dbos-sdk'
import { SessionError, type SessionStore } from '@kode/session'
import { isTurnOf, SESSION_ATTRIBUTE } from './session-turn.js'
import type { DurableTask } from './task-plan.js'

/** What a sweep needs to know. */
export interface ReaperDeps {
  store: SessionStore
  /** The workflow name the tasks are registered under. */
  workflowName: string
  /** Workflows running in this process, never reaped by it. */
  local: ReadonlySet<string>
  staleAfterMs: number
  /** The reaper's clock: only spans of it are compared, never its time with the database's. */
  now: () => number
  /**
   * What the reaper saw of each pending workflow: its `updatedAt` (the database's clock) and when,
   * by `now`, it first saw that value. Kept from sweep to sweep by the reaper's owner.
   */
  seen: Map<string, { updatedAt: number; since: number }>
  /**
   * The host's queue the tasks start on: a resumed task goes back to it, under its concurrency
   * limits, rather than to DBOS's internal queue, which has none.
   */
  queueName?: string | undefined
}

/**
 * One sweep: every pending task workflow of this application version whose session has no live
 * writer (the worker that ran it died, and its lease expired) and that this reaper has seen
 * unchanged for `staleAfterMs` goes back to DBOS's queue, where a live worker picks it up and
 * carries the task on from its history. Self-hosted DBOS recovers only the workflows of the
 * executor that restarts; this finds those of executors that never come back. Returns the resumed
 * workflow ids.
 *
 * DBOS stamps `updatedAt` with the database's clock; comparing it with this process's clock would
 * take a task that has just started (and not yet taken its session) from a live worker whenever
 * this clock runs ahead. So the age is measured on one clock: from the sweep that first saw the
 * workflow's current `updatedAt` to this one. The first sweep of a reaper resumes nothing.
 */
export async function reapOnce(deps: ReaperDeps): Promise<string[]> {
  const pending = await DBOS.listWorkflows({
    workflowName: deps.workflowName,
    status: 'PENDING',
    // Workflows of another version are another deployment's to run (see docs/scale-out.md).
    applicationVersion: DBOS.applicationVersion,
    // Inputs (up to the store's record limit each) are read only for the few tasks that look stuck
    // (see `sessionOf`), not for every pending task on every sweep of every worker.
    loadInput: false,
  })
  const at = deps.now()
  // Workflows no longer pending are forgotten: the map holds only what is still pending.
  const stillPending = new Set(pending.map((workflow) => workflow.workflowID))
  for (const id of deps.seen.keys()) if (!stillPending.has(id)) deps.seen.delete(id)
  const resumed: string[] = []
  for (const workflow of pending) {
    if (deps.local.has(workflow.workflowID)) continue
    const updatedAt = workflow.updatedAt ?? workflow.createdAt
    const seen = deps.seen.get(workflow.workflowID)
    if (seen?.updatedAt !== updatedAt) {
      deps.seen.set(workflow.workflowID, { updatedAt, since: at })
      continue
    }
    if (at - seen.since < deps.staleAfterMs) continue
    const sessionId = await sessionOf(workflow)
    if (sessionId === undefined) continue
    if (await writerAlive(deps.store, sessionId)) continue
    // A task waiting for an earlier one of its session to begin is not stuck: it may be waiting on a
    // live worker. The earlier one is resumed first; this one, once it is the first, if still here.
    // (Asked after the writer, which rules out the running tasks with one statement each.)
    if (!(await isTurnOf(deps.workflowName, sessionId, workflow.workflowID))) continue
    // DBOS resumes a cancelled workflow too: one cancelled (or taken on) since the list was read
    // is left alone, or the reaper would undo the cancellation and run the task again.
    if (!(await unchanged(workflow.workflowID, updatedAt))) continue
    await DBOS.resumeWorkflow(
      workflow.workflowID,
      deps.queueName === undefined ? undefined : { queueName: deps.queueName },
    )
    deps.seen.delete(workflow.workflowID)
    resumed.push(workflow.workflowID)
  }
  return resumed
}

/**
 * The session of a pending task: the attribute `start` and `continue` set, or, for a task enqueued
 * without it (by another service, or by an earlier release), its recorded argument, read for it
 * alone. `undefined` for a workflow whose argument names no session.
 */
async function sessionOf(workflow: WorkflowStatus): Promise<string | undefined> {
  const attribute = workflow.attributes?.[SESSION_ATTRIBUTE]
  if (typeof attribute === 'string') return attribute
  const [loaded] = await DBOS.listWorkflows({ workflowIDs: [workflow.workflowID], loadInput: true })
  const task = loaded?.input?.[0] as Partial<DurableTask> | undefined
  return typeof task?.sessionId === 'string' ? task.sessionId : undefined
}

/**
 * Whether the workflow is still pending as the sweep saw it. Read just before the resume, which
 * leaves a window of one round trip (DBOS offers no resume conditional on the status).
 */
async function unchanged(workflowId: string, updatedAt: number): Promise<boolean> {
  const status = await DBOS.getWorkflowStatus(workflowId)
  return status?.status === 'PENDING' && (status.updatedAt ?? status.createdAt) === updatedAt
}

/**
 * Whether a live writer holds the session. Taking its lease answers that (and fences off a
 * paused writer that might wake); the lease is given back at once for the resumed task to take.
 */
async function writerAlive(store: SessionStore, sessionId: string): Promise<boolean> {
  try {
    const lease = await store.acquire(sessionId)
    await lease.release()
    return false
  } catch (error) {
    if (!SessionError.is(error)) throw error
    // A session that was never created: the worker died before the task's first step.
    if (error.code === 'session_not_found') return false
    if (error.code === 'session_locked') return true
    throw error
  }
}
