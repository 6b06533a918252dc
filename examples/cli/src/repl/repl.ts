import { type Agent, pendingApprovals, type TaskOutcome } from '@kode/core'
import type { Event } from '@kode/protocol'
import { replaySession } from '@kode/session'
import type { App } from '../app.js'
import { approveAll, askEach, type DecideApprovals, denyAll } from '../approvals/decide.js'
import { type ApprovalLoop, resumeWithApprovals, runWithApprovals } from '../approvals/run-with-approvals.js'
import { DisplayController } from '../display/controller.js'
import { CommandRenderer } from '../display/renderer.js'
import type { Style } from '../display/style.js'
import { terminalSafe } from '../display/terminal-safe.js'
import { type Offline, realModelHint } from '../provider.js'
import { runSlashCommand } from './commands.js'
import type { LineInput } from './line-input.js'

/**
 * How a command or a task left the REPL: `exit` (the user asked to: /exit), or `gave_up` (a
 * second Ctrl-C left a task that did not stop after its interrupt; the REPL exits 130, as a shell
 * does on SIGINT). `undefined` reads on.
 */
export type ReplEnd = 'exit' | 'gave_up' | undefined

/** What the REPL draws on. */
export interface ReplTerminal {
  input: LineInput
  output: { write(text: string): void; readonly columns: number }
  style: Style
  /** A live terminal (TTY): spinners and in-place updates. */
  live: boolean
}

/**
 * The interactive session: reads prompts, runs each as a task of the agent, and shows its events
 * through the display pipeline. Ctrl-C interrupts a running task; at the idle prompt a second
 * Ctrl-C in a row exits (so does Ctrl-D or /exit), and so does one while an interrupted task has
 * not stopped yet (`run` then resolves 130).
 */
export class Repl {
  readonly app: App
  readonly #terminal: ReplTerminal
  readonly renderer: CommandRenderer
  readonly display: DisplayController
  agent: Agent
  /** Set by a Ctrl-C (an interrupt or a first one at the prompt): the next one at the prompt exits. */
  #exitArmed = false
  /** How calls that need approval are decided (one for the REPL: "always" answers last the session). */
  readonly #decide: DecideApprovals

  constructor(app: App, terminal: ReplTerminal, sessionId?: string) {
    this.app = app
    this.#terminal = terminal
    this.agent = app.agent(sessionId)
    this.renderer = new CommandRenderer(terminal.output, {
      style: terminal.style,
      live: terminal.live,
      thinking: app.thinking,
    })
    this.display = new DisplayController(this.agent.sessionId, this.renderer)
    this.#decide = app.yes
      ? approveAll()
      : terminal.input.isTerminal
        ? askEach({
            // The lines come revealed: stripping them again would only break the marks.
            print: (lines) => terminal.input.print(lines.map(this.style.bold).join('\n')),
            mark: terminal.style.color ? terminal.style.inverse : undefined,
            ask: async () => {
              const event = await terminal.input.readNew()
              return event.kind === 'line' ? event.text : undefined
            },
          })
        : denyAll((line) => this.print(line, this.style.yellow))
  }

  get style(): Style {
    return this.#terminal.style
  }

  /** The terminal's width in columns. */
  get columns(): number {
    return this.#terminal.output.columns
  }

  /**
   * Writes lines of the REPL's own, `paint` styling each. Their text may quote others' (a session
   * title, a prompt, an error message): it is made terminal-safe first, so only `paint`'s
   * colours reach the terminal as escape sequences.
   */
  print(text: string, paint: (line: string) => string = (line) => line): void {
    const safe = terminalSafe(text)
    this.#terminal.input.print(safe.split('\n').map(paint).join('\n'))
  }

  /** Runs until the user exits; resolves with the exit status. */
  async run(options: { resumed: boolean }): Promise<number> {
    const { input } = this.#terminal
    this.#show({
      type: 'welcome',
      sessionId: this.agent.sessionId,
      timestamp: Date.now(),
      workDir: this.app.cwd,
      model: this.app.model.client.model,
      provider: this.app.model.client.provider,
    })
    if (this.app.model.offline) this.print(scriptedNotice(this.app.model.offline), this.style.yellow)
    // A second Ctrl-C gave up on a resumed task that would not stop.
    if (options.resumed && (await this.switchTo(this.agent.sessionId)) === 'gave_up') return 130
    this.print('Type a task, /help for commands, Ctrl-C to interrupt, Ctrl-C twice to exit.', this.style.dim)
    for (;;) {
      const event = await input.read()
      if (event.kind === 'eof') return 0
      if (event.kind === 'interrupt') {
        if (this.#exitArmed) return 0
        this.#exitArmed = true
        this.print('(Ctrl-C again to exit)', this.style.dim)
        continue
      }
      this.#exitArmed = false
      const text = event.text.trim()
      if (text === '') continue
      const end = text.startsWith('/') ? await runSlashCommand(this, text) : await this.#runTask(text)
      if (end !== undefined) return exitStatus(end)
    }
  }

  /**
   * Makes `sessionId` the current session and replays its history; if its task stopped waiting
   * for approval, asks about those calls at once and carries the task on (resolves `gave_up` as
   * `#runTask` does).
   */
  async switchTo(sessionId: string): Promise<'gave_up' | undefined> {
    // Read the session before leaving this one: a session that cannot be read (a corrupt file)
    // fails here, and the REPL stays where it was instead of on a session every prompt fails in.
    const info = await this.app.store.info(sessionId)
    const events = info ? await replaySession(this.app.store, sessionId) : []
    if (sessionId !== this.agent.sessionId) {
      // Let go of the session we leave, so nothing holds its writer while we are elsewhere.
      await this.agent.close()
      this.agent = this.app.agent(sessionId)
    }
    this.display.setMainSession(sessionId)
    if (!info) return undefined
    this.print(`── session ${sessionId}${info.title ? ` · ${info.title}` : ''} ──`, this.style.dim)
    this.#show({
      type: 'replay_history',
      sessionId,
      timestamp: Date.now(),
      events,
      updatedAt: info.updatedAt,
      isLoad: true,
    })
    this.renderer.clear()
    this.print('── resumed ──', this.style.dim)
    return this.#carryOnPending()
  }

  /**
   * Decides the calls the session's task stopped waiting on, before any new message (which would
   * deny them), and carries the task on with `agent.continue`.
   */
  async #carryOnPending(): Promise<'gave_up' | undefined> {
    const pending = pendingApprovals(await this.agent.history())
    if (pending.length === 0) return undefined
    const calls = pending.length === 1 ? 'a call' : `${pending.length} calls`
    this.print(`The task of this session waits for your approval of ${calls}.`, this.style.bold)
    return this.#drive((loop) => resumeWithApprovals(this.agent, pending, loop))
  }

  /**
   * Runs one task; resolves `gave_up` when a second Ctrl-C gave up on a task that did not stop.
   * An MCP server that went away since the last task is connected again first.
   */
  async #runTask(text: string): Promise<'gave_up' | undefined> {
    for (const notice of (await this.app.mcp?.reconnect()) ?? []) this.print(notice, this.style.yellow)
    return this.#drive(async (loop) => {
      const run = this.agent.run(text, { signal: loop.signal, modelSettings: loop.modelSettings })
      const outcome = await runWithApprovals(this.agent, run, loop)
      await this.app.titleSession(this.agent.sessionId, text)
      return outcome
    })
  }

  /**
   * Drives a task (a new one, or a paused one carried on) through its approvals, with Ctrl-C
   * interrupting it; `task` resolves `undefined` when it ran nothing because the user decided
   * nothing. Resolves `gave_up` when a second Ctrl-C gave up on a task that did not stop.
   */
  async #drive(
    task: (loop: ApprovalLoop) => Promise<TaskOutcome | undefined>,
  ): Promise<'gave_up' | undefined> {
    const controller = new AbortController()
    const { input } = this.#terminal
    let giveUp!: () => void
    const givenUp = new Promise<'gave_up'>((resolve) => {
      giveUp = () => resolve('gave_up')
    })
    input.onInterrupt = () => {
      // Something that ignores the abort (a model client, a store write) must not trap the user:
      // as in exec and the demo, a Ctrl-C after the interrupt leaves at once.
      if (controller.signal.aborted) return giveUp()
      controller.abort()
      this.#exitArmed = true
    }
    const driven = (async () => {
      try {
        const { signal } = controller
        const outcome = await task({
          signal,
          modelSettings: this.app.model.modelSettings,
          decide: (pending, abort) => {
            // The spinners and the live area make way for the question.
            this.renderer.clear()
            return this.#decide(pending, abort)
          },
          onEvent: (event) => this.#show(event),
        })
        if ((outcome === undefined || outcome.reason === 'awaiting_approval') && !signal.aborted)
          this.print(
            'Not decided: the calls stay pending, and your next message denies them.',
            this.style.dim,
          )
      } catch (error) {
        this.renderer.clear()
        this.print(`✗ ${(error as Error).message}`, this.style.red)
      }
      return undefined
    })()
    try {
      return await Promise.race([driven, givenUp])
    } finally {
      input.onInterrupt = undefined
      this.renderer.clear()
    }
  }

  #show(event: Event): void {
    this.display.handle(event)
  }
}

/** The REPL's exit status for how it was left. */
function exitStatus(end: 'exit' | 'gave_up'): number {
  switch (end) {
    case 'exit':
      return 0
    case 'gave_up':
      return 130
    default: {
      const unknown: never = end
      throw new Error(`unknown REPL end ${String(unknown)}`)
    }
  }
}

/** What the REPL and the demo say when they talk to the scripted model: that, why, and how not to. */
export function scriptedNotice(offline: Offline): string {
  return [
    `Offline: ${offline.why}, so kode talks to a local scripted model (not a real LLM).`,
    `To use a real model, ${realModelHint(offline)} (see docs/cli.md).`,
  ].join('\n')
}
