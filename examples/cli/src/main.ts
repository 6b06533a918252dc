#!/usr/bin/env node
import { Readable } from 'node:stream'
// Bundled into dist/kode.js at build time: `kode -v` is always the version of this package.
import manifest from '../package.json' with { type: 'json' }
import { openApp } from './app.js'
import { terminalApprovals } from './approvals/terminal.js'
import { parseCliArgs, USAGE, UsageError } from './args.js'
import { ConfigError } from './config.js'
import { runDemo } from './demo.js'
import { colorFor, createStyle, isLive } from './display/style.js'
import { jsonTerminalSafe, terminalSafe } from './display/terminal-safe.js'
import { runExec } from './exec.js'
import { ProviderChoiceError, realModelHint } from './provider.js'
import { LineInput } from './repl/line-input.js'
import { Repl } from './repl/repl.js'
import { findSession, type SessionShelf } from './sessions.js'
import { SessionsLinkError } from './sessions-location.js'
import { readStdinPrompt } from './stdin-prompt.js'
import { Termination } from './termination.js'

const VERSION: string = manifest.version

/** Runs the `kode` command line; resolves with the exit status. */
async function main(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  termination: Termination,
): Promise<number> {
  const args = parseCliArgs(argv)
  if (args.command === 'help') return print(`${USAGE}\n`)
  if (args.command === 'version') return print(`kode ${VERSION}\n`)
  const { stdout, stderr, stdin } = process
  // `kode exec -` reads its prompt from stdin, before anything starts: nothing remains there to
  // read answers from, so calls are decided as without a terminal.
  const promptFromStdin = args.command === 'exec' && args.prompt === '-'
  const prompt = promptFromStdin ? await readStdinPrompt(stdin) : args.prompt
  const live = isLive(stdout, env)
  const style = createStyle(colorFor(stdout, env))
  const terminal = {
    write: (text: string) => void stdout.write(text),
    get columns() {
      return stdout.columns || 80
    },
  }
  // The scripted model pauses between writes so its streaming can be watched.
  const app = await openApp({
    args,
    env,
    cwd: process.cwd(),
    scriptedDelayMs: args.command === 'exec' ? 0 : 4,
    // On stderr in every mode: the REPL's display and exec's answer stay on stdout.
    warn: (line) => void stderr.write(terminalSafe(`kode: warning: ${line}\n`)),
  })
  for (const notice of app.notices) stderr.write(terminalSafe(`kode: ${notice}\n`))
  try {
    // `--resume` takes an id or an unambiguous prefix of one.
    const resume = args.resume !== undefined ? await resumable(app, args.resume) : undefined
    switch (args.command) {
      case 'exec': {
        const signal = interruptSignal(termination)
        const io = {
          // Text from the model, tools and servers must not drive the terminal (docs/cli.md).
          out: (text: string) =>
            void stdout.write(args.output === 'stream-json' ? jsonTerminalSafe(text) : terminalSafe(text)),
          err: (text: string) => void stderr.write(terminalSafe(text)),
        }
        const { offline } = app.model
        if (offline)
          io.err(
            `kode: ${offline.why}; answering with the local scripted model (offline). To use a real model, ${realModelHint(offline)}.\n`,
          )
        // Questions go to stderr: stdout carries only the answer (or the events). Their colour
        // follows stderr, so `exec > file` still marks escapes and `exec 2> file` writes no colour.
        const decide = terminalApprovals(app.yes, {
          input: promptFromStdin ? Readable.from([]) : stdin,
          output: stderr,
          notify: (line) => io.err(`kode: ${line}\n`),
          style: createStyle(colorFor(stderr, env)),
        })
        return await runExec(app, prompt!, { format: args.output, resume, signal, decide }, io)
      }
      case 'demo': {
        const decide = terminalApprovals(app.yes, {
          input: stdin,
          output: stdout,
          notify: (line) => void stderr.write(terminalSafe(`kode: ${line}\n`)),
          style,
        })
        return await runDemo(app, { output: terminal, style, live }, interruptSignal(termination), decide)
      }
      case 'repl': {
        const input = new LineInput(stdin, stdout, style.bold('› '))
        // Without a terminal (piped input) Ctrl-C arrives as a signal rather than a keystroke.
        process.on('SIGINT', () => input.interrupt())
        // SIGTERM, SIGHUP: interrupt the task as Ctrl-C does, then leave as end of input does.
        termination.stop = () => {
          input.onInterrupt?.()
          input.close()
        }
        try {
          const repl = new Repl(app, { input, output: terminal, style, live }, resume)
          return await repl.run({ resumed: resume !== undefined })
        } finally {
          input.close()
        }
      }
      default:
        return 0
    }
  } finally {
    await app.close()
  }
}

/** The session `--resume` names; none, or several, is a usage error (exit status 2). */
async function resumable(app: SessionShelf, idOrPrefix: string): Promise<string> {
  try {
    return await findSession(app, idOrPrefix)
  } catch (error) {
    // No such session, or a prefix of several: the command line's mistake. I/O errors are not.
    if ((error as NodeJS.ErrnoException).code !== undefined) throw error
    throw new UsageError(`--resume: ${(error as Error).message}`)
  }
}

/**
 * A signal that aborts on the first Ctrl-C (SIGINT); a second one exits at once. SIGTERM and
 * SIGHUP abort it too (see {@link Termination}).
 */
function interruptSignal(termination: Termination): AbortSignal {
  const controller = new AbortController()
  termination.stop = () => controller.abort()
  process.on('SIGINT', () => {
    if (controller.signal.aborted) process.exit(130)
    controller.abort()
  })
  return controller.signal
}

function print(text: string): number {
  process.stdout.write(text)
  return 0
}

function fail(error: unknown): number {
  const known =
    error instanceof UsageError ||
    error instanceof ConfigError ||
    error instanceof ProviderChoiceError ||
    error instanceof SessionsLinkError
  process.stderr.write(terminalSafe(`kode: ${(error as Error)?.message ?? String(error)}\n`))
  if (error instanceof UsageError) process.stderr.write(`\n${USAGE}\n`)
  return known ? 2 : 1
}

const termination = new Termination().listen()

// A reader that went away (`kode exec ... | head`, a closed terminal) is not an error worth a
// stack trace: what runs is interrupted, and kode ends as that signal would end it.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE' && error.code !== 'EIO') throw error
  termination.outputClosed(error.code)
})

main(process.argv.slice(2), process.env, termination)
  .catch(fail)
  .then((code) => {
    // Exit once what was written has been flushed (stdout may be an asynchronous pipe).
    process.stdout.write('', () => termination.exit(code))
  })
