import { createEndEvent, pendingApprovals, type TaskOutcome } from '@kode/core'
import { encodeEvent } from '@kode/protocol'
import type { App } from './app.js'
import type { DecideApprovals } from './approvals/decide.js'
import { type ApprovalLoop, resumeWithApprovals, runWithApprovals } from './approvals/run-with-approvals.js'

/** Where exec writes: the answer or the events to `out`, notices and errors to `err`. */
export interface ExecOutput {
  out: (text: string) => void
  err: (text: string) => void
}

/**
 * Exit status of a task: 0 completed, 130 interrupted (as for SIGINT) or left waiting for an
 * approval the user did not give, 1 otherwise.
 */
export function exitCodeOf(reason: string): number {
  return reason === 'completed' ? 0 : reason === 'aborted' || reason === 'awaiting_approval' ? 130 : 1
}

/**
 * Runs one task. `text` prints the final answer; `stream-json` prints every protocol event
 * (sub-agents' included) as one JSON line, ending with the global `end` event. Calls that need
 * approval are decided by `decide` (asked on the terminal, approved by `--yes`, or denied when
 * there is no terminal) and the task carried on. A resumed session whose task waits for approval
 * has those calls decided the same way first, and its task carried on to its end (its answer
 * printed too), before the prompt runs; if they stay undecided (Ctrl-C at the question) or that
 * task is interrupted, the prompt does not run.
 */
export async function runExec(
  app: App,
  prompt: string,
  options: { format: 'text' | 'stream-json'; resume?: string; signal: AbortSignal; decide: DecideApprovals },
  io: ExecOutput,
): Promise<number> {
  const agent = app.agent(options.resume)
  const json = options.format === 'stream-json'
  const { signal, decide } = options
  /** The last error printed: the task's end does not say it again. */
  let shownError: string | undefined
  const loop: ApprovalLoop = {
    decide,
    signal,
    modelSettings: app.model.modelSettings,
    onEvent: (event) => {
      if (json) io.out(`${encodeEvent(event)}\n`)
      else if (event.type === 'error' && event.sessionId === agent.sessionId) {
        shownError = event.errorMessage
        io.err(`kode: ${event.errorMessage}\n`)
      }
    },
  }
  const pending = options.resume === undefined ? [] : pendingApprovals(await agent.history())
  if (pending.length > 0) {
    io.err(
      `kode: session ${agent.sessionId} waits for approval of ${pending.length} call(s); deciding them first\n`,
    )
    const resumed = await resumeWithApprovals(agent, pending, loop)
    if (!json && resumed !== undefined) report(resumed, app, agent.sessionId, io, shownError)
    if (resumed === undefined || resumed.reason === 'awaiting_approval' || resumed.reason === 'aborted') {
      if (json) io.out(`${encodeEvent(createEndEvent())}\n`)
      else if (resumed === undefined)
        io.err('kode: nothing was decided: the calls stay pending, and the prompt did not run\n')
      else if (resumed.reason === 'awaiting_approval') io.err('kode: the prompt did not run\n')
      return exitCodeOf(resumed?.reason ?? 'awaiting_approval')
    }
  }
  const run = agent.run(prompt, { signal, modelSettings: loop.modelSettings })
  const outcome = await runWithApprovals(agent, run, loop)
  await app.titleSession(agent.sessionId, prompt)
  if (json) io.out(`${encodeEvent(createEndEvent())}\n`)
  else report(outcome, app, agent.sessionId, io, shownError)
  return exitCodeOf(outcome.reason)
}

/**
 * Prints a task's answer on stdout, and on stderr why it did not complete, unless that is the
 * error just printed (`shownError`).
 */
function report(
  outcome: TaskOutcome,
  app: Pick<App, 'resumeCommand'>,
  sessionId: string,
  io: ExecOutput,
  shownError?: string,
): void {
  if (outcome.text !== '') io.out(outcome.text.endsWith('\n') ? outcome.text : `${outcome.text}\n`)
  if (outcome.reason === 'awaiting_approval')
    io.err(
      `kode: task paused: ${outcome.pendingApprovals?.length ?? 0} call(s) wait for approval in session ${sessionId}; "${app.resumeCommand(sessionId)}" asks about them\n`,
    )
  else if (outcome.reason !== 'completed' && (outcome.errorMessage ?? outcome.reason) !== shownError)
    io.err(`kode: task ended: ${outcome.errorMessage ?? outcome.reason}\n`)
}
