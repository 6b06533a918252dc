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
 * as the task and aborts the run on cancel. The run starts inside the step, since DBOS checks for
 * a cancellation before it runs one: a task cancelled while its agent was built never starts. What
 * the run does is not journaled by DBOS (the history is the checkpoint): the step records nothing
 * but that the task ended. A cancelled task stops as an interrupted one does (calls that
 * were running or waiting get `aborted` results), then the step throws DBOS's
 * `DBOSWorkflowCancelledError` and the workflow stays `CANCELLED`.
 */
export async function runCancellable(start: (signal: AbortSignal) => AgentRun): Promise<TaskOutcome> {
  const controller = new AbortController()
  // Started inside the step: DBOS checks for a cancellation before it runs one, so a task
  // cancelled while its agent was being built never starts.
  let run: AgentRun | undefined
  await DBOS.runStep(
    async () => {
      run = start(controller.signal)
      const settled = run.done.then(
        () => undefined,
        () => undefined,
      )
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
  // An earlier execution recorded the step (its run ended, the workflow's own end was lost): the
  // history holds no end of the task, so it runs here, outside the step.
  run ??= start(controller.signal)
  return run.done
}
