import { createEndEvent } from '@kode/core'
import { encodeEvent } from '@kode/protocol'
import type { App } from './app.js'
import type { DecideApprovals } from './approvals/decide.js'
import { runWithApprovals } from './approvals/run-with-approvals.js'

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
 * there is no terminal) and the task carried on.
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
  const modelSettings = app.model.modelSettings
  const run = agent.run(prompt, { signal, modelSettings })
  const outcome = await runWithApprovals(agent, run, {
    decide,
    signal,
    modelSettings,
    onEvent: (event) => {
      if (json) io.out(`${encodeEvent(event)}\n`)
      else if (event.type === 'error' && event.sessionId === agent.sessionId)
        io.err(`kode: ${event.errorMessage}\n`)
    },
  })
  await app.titleSession(agent.sessionId, prompt)
  if (json) io.out(`${encodeEvent(createEndEvent())}\n`)
  else if (outcome.text !== '') io.out(outcome.text.endsWith('\n') ? outcome.text : `${outcome.text}\n`)
  if (outcome.reason === 'awaiting_approval' && !json)
    io.err(
      `kode: task paused: ${outcome.pendingApprovals?.length ?? 0} call(s) wait for approval in session ${agent.sessionId}; the next prompt there denies them\n`,
    )
  else if (outcome.reason !== 'completed' && !json)
    io.err(`kode: task ended: ${outcome.errorMessage ?? outcome.reason}\n`)
  return exitCodeOf(outcome.reason)
}
