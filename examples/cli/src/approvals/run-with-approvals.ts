import type { Agent, AgentRun, ModelSettings, TaskOutcome } from '@kode/core'
import type { Event } from '@kode/protocol'
import type { DecideApprovals } from './decide.js'

/** What {@link runWithApprovals} needs besides the first run. */
export interface ApprovalLoop {
  decide: DecideApprovals
  signal: AbortSignal
  modelSettings: ModelSettings
  /** Every event of every run, in order. */
  onEvent(event: Event): void
}

/**
 * Drives a task to its end through its pauses for approval: each time the task stops with
 * `awaiting_approval`, the pending calls are decided and the decisions recorded with
 * `agent.continue({ approvals })`, whose run is followed in turn. Resolves with the last outcome;
 * that is still `awaiting_approval` when the user gave up deciding or the task was interrupted.
 */
export async function runWithApprovals(
  agent: Agent,
  first: AgentRun,
  loop: ApprovalLoop,
): Promise<TaskOutcome> {
  let run = first
  for (;;) {
    for await (const event of run) loop.onEvent(event)
    const outcome = await run.done
    if (outcome.reason !== 'awaiting_approval' || !outcome.pendingApprovals?.length) return outcome
    if (loop.signal.aborted) return outcome
    const approvals = await loop.decide(outcome.pendingApprovals, loop.signal)
    if (approvals === undefined || loop.signal.aborted) return outcome
    run = agent.continue({ approvals }, { signal: loop.signal, modelSettings: loop.modelSettings })
  }
}
