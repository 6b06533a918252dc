import type { TaskFinishReason, TaskMetadataSummary } from '@kode/protocol'

/** A tool call that waits for the user's approval (`TaskOutcome.pendingApprovals`). */
export interface PendingApproval {
  toolCallId: string
  toolName: string
  /** The call's arguments as the model wrote them (JSON text). */
  arguments: string
}

/** How a task ended, as `run(...).done` resolves it. */
export interface TaskOutcome {
  /** The session the task ran in. */
  sessionId: string
  /**
   * `completed`, `max_turns`, `error` (a provider failure, or the host's: a throwing event listener),
   * `aborted` (the user interrupted) or `awaiting_approval` (calls wait for the user's decision).
   */
  reason: TaskFinishReason
  /** The final assistant text (`task_finish.taskResult`). */
  text: string
  /** The task's accounting, with the sub-agents it ran (`task_metadata.metadata`). */
  metadata: TaskMetadataSummary
  /** What stopped the task when `reason` is `error` or `max_turns`. */
  errorMessage?: string
  /** The calls awaiting the user's decision when `reason` is `awaiting_approval` (see `agent.continue`). */
  pendingApprovals?: PendingApproval[]
}
