const DURABLE_ERROR = Symbol.for('kode.DurableTaskError')

/** Why a durable task was refused or could not run. */
export type DurableTaskErrorCode =
  /** An option of `createDurableAgents` or of a call is unusable. */
  | 'invalid_options'
  /**
   * The input of `start` (or the decisions of `continue`) cannot be run: not valid user input, not
   * something DBOS can record, or larger than the store's `maxRecordBytes`. Nothing was started.
   * Also the workflow's failure when its argument, enqueued by another service, is not a task.
   */
  | 'invalid_input'
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
   * before a worker carried it on: its history, the task's checkpoint, is gone. Or a `continue`
   * named a session that does not exist: it has nothing to carry on, and creates none.
   */
  | 'session_deleted'
  /**
   * DBOS stopped running the task: it was started or recovered more times than DBOS allows (100 by
   * default), each execution ending with its worker (a crash, an out-of-memory kill). DBOS marks it
   * `MAX_RECOVERY_ATTEMPTS_EXCEEDED` and neither it nor the reaper runs it again; find why it takes
   * its workers down, then `DBOS.resumeWorkflow(workflowId)` runs it once more.
   */
  | 'recovery_attempts_exceeded'

/** Every code, to recognise a recorded one (a `Record`, so a new code cannot be left out). */
const CODES: Record<DurableTaskErrorCode, true> = {
  invalid_options: true,
  invalid_input: true,
  wrong_session: true,
  unknown_task: true,
  task_cancelled: true,
  task_superseded: true,
  session_deleted: true,
  recovery_attempts_exceeded: true,
}

/**
 * A mistake in how the host uses durable tasks, or why a task could not run. `DurableTaskError.is(e)`
 * recognises one from any copy of this package, and one a workflow threw as `result()` and
 * `status()` give it back (see `revive`).
 */
export class DurableTaskError extends Error {
  override readonly name = 'DurableTaskError'
  readonly code: DurableTaskErrorCode
  readonly [DURABLE_ERROR] = true

  constructor(code: DurableTaskErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
  }

  /**
   * The error a workflow threw, as DBOS gives it back: DBOS records errors as JSON and rebuilds
   * them as plain `Error`s (same `name`, `message`, `code`), which `is` would not know. One that was
   * a `DurableTaskError` becomes one again (the same `cause`); anything else is returned as it is.
   */
  static revive(value: unknown): unknown {
    if (DurableTaskError.is(value) || !(value instanceof Error) || value.name !== 'DurableTaskError')
      return value
    const code = (value as { code?: unknown }).code
    if (typeof code !== 'string' || !Object.hasOwn(CODES, code)) return value
    const revived = new DurableTaskError(code as DurableTaskErrorCode, value.message, { cause: value.cause })
    if (value.stack !== undefined) revived.stack = value.stack
    return revived
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
