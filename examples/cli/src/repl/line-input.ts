import { createInterface, type Interface } from 'node:readline'
import { Writable } from 'node:stream'
import { terminalSafe } from '../display/terminal-safe.js'
import {
  BRACKETED_PASTE_OFF,
  BRACKETED_PASTE_ON,
  joinPastedLines,
  restorePastedBreaks,
} from './bracketed-paste.js'

/** What the user did at the prompt. */
export type InputEvent = { kind: 'line'; text: string } | { kind: 'interrupt' } | { kind: 'eof' }

/**
 * The prompt: one readline interface for the whole session, so typing ahead while a task runs
 * is kept for the next prompt. Its echo is muted while no prompt is shown, so keystrokes do not
 * scribble over the streaming output. Ctrl-C at the prompt clears a typed line, or (on an empty
 * line) is reported as `interrupt`; while a task runs it calls `onInterrupt`. On a terminal, what is
 * pasted at the prompt is one line, its line breaks kept (bracketed paste).
 */
export class LineInput {
  readonly #rl: Interface
  readonly #terminal: boolean
  readonly #output: NodeJS.WritableStream
  readonly #queue: InputEvent[] = []
  #waiting: ((event: InputEvent) => void) | undefined
  #muted = true
  /** Input has ended (Ctrl-D, the pipe closed): every read from now on is `eof`. */
  #ended = false
  /** Called for Ctrl-C while no prompt is shown (a task is running). */
  onInterrupt: (() => void) | undefined

  constructor(
    input: NodeJS.ReadableStream & { isTTY?: boolean },
    output: NodeJS.WriteStream,
    prompt: string,
  ) {
    this.#output = output
    this.#terminal = Boolean(input.isTTY && output.isTTY)
    const echo = new Writable({
      write: (chunk, _encoding, done) => {
        if (!this.#muted) output.write(chunk)
        done()
      },
    })
    // readline lays out the line by the terminal's width and redraws on resize.
    Object.defineProperty(echo, 'columns', { get: () => output.columns })
    Object.defineProperty(echo, 'isTTY', { value: output.isTTY })
    output.on('resize', () => echo.emit('resize'))
    this.#rl = createInterface({
      input: this.#terminal ? joinPastedLines(input) : input,
      output: echo,
      prompt,
      terminal: this.#terminal,
      historySize: 500,
    })
    this.#rl.on('line', (text) =>
      this.#push({ kind: 'line', text: this.#terminal ? restorePastedBreaks(text) : text }),
    )
    this.#rl.on('SIGINT', () => this.interrupt())
    // The terminal went away (closed, hung up: `setRawMode EIO`): that is end of input, not a
    // crash. The error may come from inside `close` itself, so close once it has returned.
    this.#rl.on('error', () => queueMicrotask(() => this.#rl.close()))
    this.#rl.on('close', () => {
      this.#ended = true
      this.#push({ kind: 'eof' })
    })
  }

  /** Shows the prompt and resolves with the next line, Ctrl-C or end of input. */
  read(): Promise<InputEvent> {
    const queued = this.#queue.shift()
    if (queued) {
      // A line typed ahead (or piped in): show it as if it had been typed at the prompt, without
      // the escape sequences piped text may hold (the model still gets the line as it is).
      if (queued.kind === 'line') this.#output.write(`${this.#rl.getPrompt()}${terminalSafe(queued.text)}\n`)
      return Promise.resolve(queued)
    }
    // The one `eof` may have gone to an approval question: a later prompt must not wait forever.
    if (this.#ended) return Promise.resolve({ kind: 'eof' })
    this.#muted = false
    // Pastes are marked only while the prompt is shown: one typed ahead during a task, or into
    // whatever runs after kode, is left to the terminal as before.
    this.#pasteMode(true)
    this.#rl.prompt(true)
    return new Promise((resolve) => {
      this.#waiting = (event) => {
        this.#muted = true
        this.#pasteMode(false)
        resolve(event)
      }
    })
  }

  /**
   * Like {@link LineInput.read}, but only a line typed from now on answers: lines typed ahead
   * while a task ran stay queued for the next prompt (they were meant as prompts, not answers).
   */
  async readNew(): Promise<InputEvent> {
    const ahead = this.#queue.splice(0)
    try {
      return await this.read()
    } finally {
      this.#queue.unshift(...ahead)
    }
  }

  /** Whether input comes from a terminal (a user who can be asked), not a pipe. */
  get isTerminal(): boolean {
    return this.#terminal
  }

  /** Ctrl-C (from the keyboard in raw mode, or SIGINT otherwise). */
  interrupt(): void {
    if (!this.#waiting) {
      this.onInterrupt?.()
      return
    }
    if (this.#rl.line !== '') {
      // Clear what was typed, like a shell.
      this.#rl.write(null, { ctrl: true, name: 'e' })
      this.#rl.write(null, { ctrl: true, name: 'u' })
      return
    }
    this.#output.write('\n')
    this.#push({ kind: 'interrupt' })
  }

  /** Writes text while the prompt is hidden (the prompt is redrawn by the next `read`). */
  print(text: string): void {
    this.#output.write(text.endsWith('\n') ? text : `${text}\n`)
  }

  close(): void {
    this.#pasteMode(false)
    this.#rl.close()
  }

  #pasteMode(on: boolean): void {
    if (this.#terminal) this.#output.write(on ? BRACKETED_PASTE_ON : BRACKETED_PASTE_OFF)
  }

  #push(event: InputEvent): void {
    const waiting = this.#waiting
    this.#waiting = undefined
    if (waiting) waiting(event)
    else this.#queue.push(event)
  }
}
