import { DBOS } from '@dbos-inc/dbos-sdk'
import { SessionError, type SessionStore } from '@kode/session'
import type { DurableTask } from './task-plan.js'

/** What a sweep needs to know. */
export interface ReaperDeps {
  store: SessionStore
  /** The workflow name the tasks are registered under. */
  workflowName: string
  /** Workflows running in this process, never reaped by it. */
  local: ReadonlySet<string>
  staleAfterMs: number
  now: () => number
}

/**
 * One sweep: every pending task workflow of this application version whose session has no live
 * writer (the worker that ran it died, and its lease expired) and that has not changed for
 * `staleAfterMs` goes back to DBOS's queue, where a live worker picks it up and carries the task
 * on from its history. Self-hosted DBOS recovers only the workflows of the executor that
 * restarts; this finds those of executors that never come back. Returns the resumed workflow ids.
 */
export async function reapOnce(deps: ReaperDeps): Promise<string[]> {
  const pending = await DBOS.listWorkflows({
    workflowName: deps.workflowName,
    status: 'PENDING',
    // Workflows of another version are another deployment's to run (see docs/scale-out.md).
    applicationVersion: DBOS.applicationVersion,
    loadInput: true,
  })
  const resumed: string[] = []
  for (const workflow of pending) {
    if (deps.local.has(workflow.workflowID)) continue
    if (deps.now() - (workflow.updatedAt ?? workflow.createdAt) < deps.staleAfterMs) continue
    const task = workflow.input?.[0] as DurableTask | undefined
    if (typeof task?.sessionId !== 'string') continue
    if (await writerAlive(deps.store, task.sessionId)) continue
    await DBOS.resumeWorkflow(workflow.workflowID)
    resumed.push(workflow.workflowID)
  }
  return resumed
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
