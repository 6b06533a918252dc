import { DBOS } from '@dbos-inc/dbos-sdk'

/**
 * The workflow attribute that names a task's session (`start` and `continue` set it), so that the
 * session's other tasks can be found without reading every workflow's input.
 */
export const SESSION_ATTRIBUTE = 'kode.sessionId'

/** The name of the step in which a task begins (see `executeTask`). */
export const BEGIN_STEP = 'kode.task.begin'

/**
 * Whether task `workflowId` may begin on its session now: it began already, or no task of the
 * session started before it (by DBOS's `createdAt`, the database's clock; the workflow id breaks a
 * tie) is still waiting to begin. Tasks waiting for a session each retry on their own schedule, so without this the one
 * that happens to retry first when the session frees up would run first, and the messages of a
 * conversation would run out of the order they were sent. A task that already began (its
 * `kode.task.begin` step is recorded) is not waited for: it holds the session, or its worker died
 * and another task may overtake it (see docs/scale-out.md). Tasks enqueued without the attribute
 * (by another service) and tasks of another application version are not seen.
 */
export async function isTurnOf(
  workflowName: string,
  sessionId: string,
  workflowId: string,
): Promise<boolean> {
  const own = await DBOS.getWorkflowStatus(workflowId)
  if (!own) return true
  const earlier = await DBOS.listWorkflows({
    workflowName,
    status: ['PENDING', 'ENQUEUED', 'DELAYED'],
    attributes: { [SESSION_ATTRIBUTE]: sessionId },
    applicationVersion: DBOS.applicationVersion,
    endTime: new Date(own.createdAt).toISOString(),
    loadInput: false,
    loadOutput: false,
  })
  for (const task of earlier) {
    if (task.workflowID === workflowId) continue
    if (task.createdAt > own.createdAt || (task.createdAt === own.createdAt && task.workflowID > workflowId))
      continue
    // Queued (or delayed, or resumed onto a queue), it is about to begin, or begin again.
    if (task.status === 'PENDING' && (await hasBegun(task.workflowID))) continue
    // A task that began is never held back (the reaper asks about those too): it may hold the
    // session, and a worker of it that was only paused would otherwise be fenced off for nothing.
    return hasBegun(workflowId)
  }
  return true
}

async function hasBegun(workflowId: string): Promise<boolean> {
  const steps = await DBOS.listWorkflowSteps(workflowId)
  return steps?.some((step) => step.name === BEGIN_STEP) ?? false
}
