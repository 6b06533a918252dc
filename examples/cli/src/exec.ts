import { createEndEvent } from '@kode/core'
import { encodeEvent } from '@kode/protocol'
import type { App } from './app.js'

/** Where exec writes: the answer or the events to `out`, notices and errors to `err`. */
export interface ExecOutput {
  out: (text: string) => void
  err: (text: string) => void
}

/** Exit status of a task: 0 completed, 130 interrupted (as for SIGINT), 1 otherwise. */
export function exitCodeOf(reason: string): number {
  return reason === 'completed' ? 0 : reason === 'aborted' ? 130 : 1
}

/**
 * Runs one task. `text` prints the final answer; `stream-json` prints every protocol event
 * (sub-agents' included) as one JSON line, ending with the global `end` event.
 */
export async function runExec(
  app: App,
  prompt: string,
  options: { format: 'text' | 'stream-json'; resume?: string; signal: AbortSignal },
  io: ExecOutput,
): Promise<number> {
  const agent = app.agent(options.resume)
  const json = options.format === 'stream-json'
  const run = agent.run(prompt, { signal: options.signal, modelSettings: app.model.modelSettings })
  for await (const event of run) {
    if (json) io.out(`${encodeEvent(event)}\n`)
    else if (event.type === 'error' && event.sessionId === agent.sessionId)
      io.err(`kode: ${event.errorMessage}\n`)
  }
  const outcome = await run.done
  await app.titleSession(agent.sessionId, prompt)
  if (json) io.out(`${encodeEvent(createEndEvent())}\n`)
  else if (outcome.text !== '') io.out(outcome.text.endsWith('\n') ? outcome.text : `${outcome.text}\n`)
  if (outcome.reason !== 'completed' && !json)
    io.err(`kode: task ended: ${outcome.errorMessage ?? outcome.reason}\n`)
  return exitCodeOf(outcome.reason)
}
