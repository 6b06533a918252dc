import type { Agent, AgentRun, ModelSettings, PendingApproval, TaskOutcome } from '@kode/core'
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

/**
 * Carries on a resumed session's task that stopped waiting for approval: decides its pending calls
 * (as for a live task: asked, approved by `--yes`, or denied without a terminal) and follows
 * `agent.continue({ approvals })` through any further pauses. Resolves `undefined` when the user
 * gave up deciding (the calls stay pending) or an interrupt came first; nothing ran then.
 */
export async function resumeWithApprovals(
  agent: Agent,
  pending: readonly PendingApproval[],
  loop: ApprovalLoop,
): Promise<TaskOutcome | undefined> {
  const approvals = await loop.decide(pending, loop.signal)
  if (approvals === undefined || loop.signal.aborted) return undefined
  const run = agent.continue({ approvals }, { signal: loop.signal, modelSettings: loop.modelSettings })
  return runWithApprovals(agent, run, loop)
}
