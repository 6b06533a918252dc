import type { TaskFinishReason, TaskMetadataSummary } from '@kode/protocol'

/** A tool call that waits for the user's approval (`TaskOutcome.pendingApprovals`). */
export interface PendingApproval {
  toolCallId: string
  toolName: string
  /** The call's arguments as the model wrote them (JSON text). */
  arguments: string
}

/**
 * How a task ended, as `run(...).done` resolves it. `O` is the type of the structured output
 * (`Static<typeof schema>` for `run(input, { output: schema })`).
 */
export interface TaskOutcome<O = unknown> {
  /** The session the task ran in. */
  sessionId: string
  /**
   * `completed`, `max_turns`, `error` (a provider failure, or the host's: a throwing event listener),
   * `aborted` (the user interrupted), `awaiting_approval` (calls wait for the user's decision) or
   * `structured_output_invalid` (the answer did not validate against `output`, even after one
   * corrective turn).
   */
  reason: TaskFinishReason
  /** The final assistant text (`task_finish.taskResult`). */
  text: string
  /** The task's accounting, with the sub-agents it ran (`task_metadata.metadata`). */
  metadata: TaskMetadataSummary
  /**
   * The final answer as a value valid against the run's `output` schema: set when `reason` is
   * `completed` and a schema was given, never otherwise.
   */
  output?: O
  /** What stopped the task when `reason` is `error`, `max_turns` or `structured_output_invalid`. */
  errorMessage?: string
  /** The calls awaiting the user's decision when `reason` is `awaiting_approval` (see `agent.continue`). */
  pendingApprovals?: PendingApproval[]
}
