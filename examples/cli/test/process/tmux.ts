import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'

const TMUX = '/usr/bin/tmux'

/** Makes sure Debian's tmux is installed (the terminal test never skips for want of it). */
export function ensureTmux(): void {
  if (existsSync(TMUX)) return
  execFileSync('apt-get', ['update'], { stdio: 'pipe' })
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'tmux'], {
    stdio: 'pipe',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  })
}

/** A program running in a detached tmux session of its own server, driven by keys and read off the screen. */
export class TmuxSession {
  readonly #socket: string

  constructor(name: string, command: string, size = { columns: 120, rows: 50 }) {
    this.#socket = `${name}-${process.pid}`
    this.#tmux(
      'new-session',
      '-d',
      '-s',
      'main',
      '-x',
      String(size.columns),
      '-y',
      String(size.rows),
      command,
    )
  }

  /** Types `keys` (tmux key names such as `Enter` and `C-c` are pressed as keys). */
  send(...keys: string[]): void {
    this.#tmux('send-keys', '-t', 'main', ...keys)
  }

  /**
   * Pastes `text` as a terminal does: inside bracketed-paste markers when the program asked for
   * them, as plain typing otherwise.
   */
  paste(text: string): void {
    this.#tmux('set-buffer', '-b', 'paste', text)
    this.#tmux('paste-buffer', '-p', '-d', '-b', 'paste', '-t', 'main')
  }

  /** The screen and its scrollback as text, wrapped lines joined. */
  screen(): string {
    return this.#tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'main')
  }

  /** {@link TmuxSession.screen} with its colours and attributes, as escape sequences (tmux writes its own). */
  styledScreen(): string {
    return this.#tmux('capture-pane', '-p', '-e', '-J', '-S', '-', '-t', 'main')
  }

  /** Whether the program is still running (tmux closes the session when it exits). */
  running(): boolean {
    try {
      this.#tmux('has-session', '-t', 'main')
      return true
    } catch {
      return false
    }
  }

  /** Polls until `check` holds; fails with the screen when it never does (a hang, not a slow machine). */
  async waitFor(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${this.screen()}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  /** Waits until the screen shows `text`. */
  waitForText(text: string): Promise<void> {
    return this.waitFor(JSON.stringify(text), () => this.screen().includes(text))
  }

  kill(): void {
    try {
      this.#tmux('kill-server')
    } catch {
      // Already gone.
    }
  }

  #tmux(...args: string[]): string {
    return execFileSync(TMUX, ['-u', '-L', this.#socket, ...args], { encoding: 'utf8', stdio: 'pipe' })
  }
}
