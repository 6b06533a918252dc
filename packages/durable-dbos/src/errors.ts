const DURABLE_ERROR = Symbol.for('kode.DurableTaskError')

/** Why a durable task was refused or could not run. */
export type DurableTaskErrorCode =
  /** An option of `createDurableAgents` or of a call is unusable. */
  | 'invalid_options'
  /** `agentFactory` returned an agent bound to another session than the task's. */
  | 'wrong_session'
  /** No workflow of these tasks has the id. */
  | 'unknown_task'
  /** The task's workflow was cancelled (`DBOS.cancelWorkflow`): it has no outcome. */
  | 'task_cancelled'
  /**
   * The task's worker died mid-task, and another task's input began on its session before the
   * task was carried on: that task settled the stopped one's calls, and it has no outcome.
   */
  | 'task_superseded'
  /**
   * The task's session was deleted (or deleted and created again) after the task began, and
   * before a worker carried it on: its history, the task's checkpoint, is gone.
   */
  | 'session_deleted'

/**
 * A mistake in how the host uses durable tasks. `DurableTaskError.is(e)` recognises one from any
 * copy of this package (a workflow's recorded error comes back from DBOS as a plain `Error` with
 * the same `name` and `message`).
 */
export class DurableTaskError extends Error {
  override readonly name = 'DurableTaskError'
  readonly code: DurableTaskErrorCode
  readonly [DURABLE_ERROR] = true

  constructor(code: DurableTaskErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
  }

  /** True for a `DurableTaskError` from any copy of this package. */
  static is(value: unknown): value is DurableTaskError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[DURABLE_ERROR] === true
    )
  }
}
