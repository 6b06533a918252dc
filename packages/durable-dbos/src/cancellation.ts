import { DBOS } from '@dbos-inc/dbos-sdk'
import type { AgentRun, TaskOutcome } from '@kode/core'

/** The name of the step that lasts as long as a task runs, watching for `DBOS.cancelWorkflow`. */
export const WATCH_STEP = 'kode.task.watch'

/**
 * Runs the task `start` begins with a signal that aborts when its workflow is cancelled
 * (`DBOS.cancelWorkflow`), and resolves with its outcome.
 *
 * DBOS tells a running workflow about a cancellation only inside a step
 * (`DBOS.stepStatus.cancelSignal`, which it polls for about once a second); elsewhere, only the
 * workflow's next DBOS call throws, and a task makes none while it runs. So one step lasts as long
 * as the task and aborts the run on cancel. The run itself stays outside the step: model calls and
 * tool results are not journaled by DBOS (the history is the checkpoint), and the step records
 * nothing but that the task ended. A cancelled task stops as an interrupted one does (calls that
 * were running or waiting get `aborted` results), then the step throws DBOS's
 * `DBOSWorkflowCancelledError` and the workflow stays `CANCELLED`.
 */
export async function runCancellable(start: (signal: AbortSignal) => AgentRun): Promise<TaskOutcome> {
  const controller = new AbortController()
  const run = start(controller.signal)
  const settled = run.done.then(
    () => undefined,
    () => undefined,
  )
  await DBOS.runStep(
    async () => {
      const cancel = DBOS.stepStatus?.cancelSignal
      if (cancel === undefined) return settled
      let onCancel!: () => void
      const cancelled = new Promise<void>((resolve) => {
        onCancel = resolve
        if (cancel.aborted) resolve()
        else cancel.addEventListener('abort', onCancel, { once: true })
      })
      await Promise.race([settled, cancelled])
      cancel.removeEventListener('abort', onCancel)
      if (!cancel.aborted) return undefined
      controller.abort(cancel.reason)
      await settled
      throw cancel.reason
    },
    { name: WATCH_STEP },
  )
  return run.done
}
