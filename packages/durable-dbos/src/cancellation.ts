import { DBOS } from '@dbos-inc/dbos-sdk'
import type { AgentRun, TaskOutcome } from '@kode/core'
import { safeError } from './safe-error.js'

/** The name of the steps that last as long as a task runs, watching for `DBOS.cancelWorkflow`. */
export const WATCH_STEP = 'kode.task.watch'

/**
 * Runs `body` inside a `kode.task.watch` step, given the signal DBOS aborts when the workflow is
 * cancelled (`DBOS.cancelWorkflow`), and resolves with what it returns.
 *
 * DBOS tells a running workflow about a cancellation only inside a step
 * (`DBOS.stepStatus.cancelSignal`, which it polls for about once a second); elsewhere, only the
 * workflow's next DBOS call throws, and a task makes none while it runs. So whatever may wait or run
 * for long (the run, and on a later execution the wait for the session's lease) happens inside the
 * step. A step an earlier execution recorded does not run again: one that recorded an outcome (its
 * run ended, the workflow's own end was lost) gives it back; one recorded by an earlier version
 * (nothing) or one whose run ended with no outcome is passed, and `body` runs in the next one, so
 * it never runs outside a step. What the run does is not journaled by DBOS (the history is the
 * checkpoint): the step records the outcome alone. What `body` throws reaches DBOS made safe (see
 * `safeError`).
 */
export async function inWatchStep(
  body: (cancel: AbortSignal | undefined) => Promise<TaskOutcome>,
): Promise<TaskOutcome> {
  for (;;) {
    let ran = false
    const recorded = await DBOS.runStep(
      async () => {
        ran = true
        try {
          return await body(DBOS.stepStatus?.cancelSignal)
        } catch (error) {
          throw safeError(error)
        }
      },
      { name: WATCH_STEP },
    )
    if (ran || (recorded !== undefined && recorded !== null)) return recorded
  }
}

/**
 * Starts the run (unless the workflow was cancelled already) and resolves with its outcome; on
 * cancel, the run is interrupted as `agent.interrupt` would (calls that were running or waiting get
 * `aborted` results, the task ends `aborted` in the history), then DBOS's cancellation error is
 * thrown and the workflow stays `CANCELLED`.
 */
export async function runCancellable(
  start: (signal: AbortSignal) => AgentRun,
  cancel: AbortSignal | undefined,
): Promise<TaskOutcome> {
  cancel?.throwIfAborted()
  const controller = new AbortController()
  const run = start(controller.signal)
  const settled = run.done.then(
    () => undefined,
    () => undefined,
  )
  if (cancel === undefined) return run.done
  let onCancel!: () => void
  const cancelled = new Promise<void>((resolve) => {
    onCancel = resolve
    if (cancel.aborted) resolve()
    else cancel.addEventListener('abort', onCancel, { once: true })
  })
  await Promise.race([settled, cancelled])
  cancel.removeEventListener('abort', onCancel)
  if (!cancel.aborted) return run.done
  controller.abort(cancel.reason)
  await settled
  throw cancel.reason
}
