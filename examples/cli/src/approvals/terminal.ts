import { createInterface } from 'node:readline'
import type { Style } from '../display/style.js'
import { approveAll, askEach, type DecideApprovals, denyAll } from './decide.js'

/** Where `exec` and the demo ask: the terminal's input, and the stream the questions go to. */
export interface ApprovalTerminal {
  input: NodeJS.ReadableStream & { isTTY?: boolean }
  output: NodeJS.WritableStream & { isTTY?: boolean }
  /** Writes a notice line (stderr). */
  notify(line: string): void
  /** Colours the question, and marks what the prompt reveals (when it has colour). */
  style: Style
}

/**
 * How `exec` and the demo decide: `--yes` approves every call; with a terminal on stdin the
 * user is asked (see `askEach`); without one every call is denied at once with a reason, so a
 * script or a CI job never hangs on a question no one can answer.
 */
export function terminalApprovals(yes: boolean, terminal: ApprovalTerminal): DecideApprovals {
  if (yes) return approveAll()
  if (!terminal.input.isTTY) return denyAll((line) => terminal.notify(line))
  const { style } = terminal
  return askEach({
    // The lines come revealed: stripping them again would only break the marks.
    print: (lines) => terminal.output.write(`${lines.map(style.bold).join('\n')}\n`),
    ask: (signal) => readAnswer(terminal, signal),
    mark: style.color ? style.inverse : undefined,
  })
}

/** One line from the terminal; `undefined` on Ctrl-C, end of input or an interrupt. */
function readAnswer(terminal: ApprovalTerminal, signal: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: terminal.input, output: terminal.output, terminal: true })
    let answered = false
    const done = (answer: string | undefined) => {
      if (answered) return
      answered = true
      signal.removeEventListener('abort', onAbort)
      rl.close()
      resolve(answer)
    }
    const onAbort = () => done(undefined)
    signal.addEventListener('abort', onAbort, { once: true })
    rl.on('SIGINT', () => {
      terminal.output.write('\n')
      done(undefined)
    })
    rl.on('close', () => done(undefined))
    // The terminal went away (closed, hung up: `setRawMode EIO`): nobody is left to answer.
    rl.on('error', () => done(undefined))
    rl.question('› ', (answer) => done(answer))
  })
}
