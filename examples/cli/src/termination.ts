/**
 * Why kode ends early, and the exit status a shell reports for each (128 + the signal's number).
 * SIGPIPE is not listened for (Node ignores it): a write to a closed stdout fails with EPIPE instead.
 */
const TERMINATING = { SIGHUP: 129, SIGTERM: 143, SIGPIPE: 141 } as const

type TerminatingSignal = keyof typeof TERMINATING

const LISTENED: readonly TerminatingSignal[] = ['SIGHUP', 'SIGTERM']

/**
 * SIGTERM (`kill`, a supervisor) and SIGHUP (the terminal closed) end kode as Ctrl-C ends a task:
 * `stop` interrupts what runs, so the tools stop what they started (a `bash` command runs in a
 * process group of its own, which no signal to kode reaches), the session records the interrupt,
 * and kode then exits with the signal's status. Left to Node, kode would exit on the spot and
 * leave those commands running. A second signal, or one before there is anything to stop, exits
 * at once. Output that closes (the reader of `kode exec … | head -1` gone) ends kode the same way,
 * as SIGPIPE would have: no output can reach anyone, so the task stops spending tokens.
 */
export class Termination {
  #signal: TerminatingSignal | undefined
  /** Interrupts what runs; the mode sets it once it runs something. */
  stop: (() => void) | undefined

  /** Starts listening for the signals. */
  listen(): this {
    for (const signal of LISTENED) process.on(signal, () => this.#receive(signal))
    return this
  }

  /**
   * stdout failed: EPIPE (its reader is gone) ends kode as SIGPIPE would, EIO (its terminal is
   * gone) as SIGHUP. Once kode is ending, what it still writes fails too and changes nothing.
   */
  outputClosed(code: 'EPIPE' | 'EIO'): void {
    if (this.#signal !== undefined) return
    this.#receive(code === 'EPIPE' ? 'SIGPIPE' : 'SIGHUP')
  }

  /** Exits with `code`, or, once a signal asked kode to end, with that signal's status. */
  exit(code: number): never {
    if (this.#signal === 'SIGHUP') {
      // The terminal is gone, and Node 20 fails an assertion (and dumps its stack) restoring its
      // mode on exit. Ending by the signal itself skips that; the parent sees the same status.
      process.removeAllListeners('SIGHUP')
      process.kill(process.pid, 'SIGHUP')
    }
    return process.exit(this.#signal === undefined ? code : TERMINATING[this.#signal])
  }

  #receive(signal: TerminatingSignal): void {
    const again = this.#signal !== undefined
    this.#signal ??= signal
    if (again || this.stop === undefined) this.exit(TERMINATING[signal])
    this.stop()
  }
}
