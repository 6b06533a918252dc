import { spawn } from 'node:child_process'

/** How a command ended. */
export interface CommandResult {
  /** stdout and stderr interleaved as they arrived, capped (see {@link OutputCap}). */
  output: string
  /** The exit code; `undefined` when a signal ended it. */
  exitCode: number | undefined
  signal: NodeJS.Signals | undefined
  timedOut: boolean
  aborted: boolean
}

/** What {@link runCommand} needs. */
export interface CommandOptions {
  cwd: string
  env: NodeJS.ProcessEnv
  timeoutMs: number
  signal: AbortSignal
  /** The most bytes of output kept: the first third and the last two thirds. */
  maxOutputBytes: number
  /** Grace between SIGTERM and SIGKILL when the command is stopped. Default 2,000 ms. */
  killGraceMs?: number
}

/**
 * Runs `command` with `bash -c` in a process group of its own, without stdin (so a command that
 * waits for input ends instead of hanging). A timeout or the abort signal stops the whole group
 * (the command and everything it started): SIGTERM, then SIGKILL after the grace. Resolves once
 * the command has exited, never rejects for the command's own failure; rejects when bash cannot
 * be started.
 */
export function runCommand(command: string, options: CommandOptions): Promise<CommandResult> {
  const { signal, killGraceMs = 2_000 } = options
  return new Promise((resolve, reject) => {
    const output = new OutputCap(options.maxOutputBytes)
    let timedOut = false
    let aborted = false
    let killTimer: NodeJS.Timeout | undefined
    const child = spawn('bash', ['-c', command], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const stop = () => {
      killGroup(child.pid, 'SIGTERM')
      killTimer ??= setTimeout(() => killGroup(child.pid, 'SIGKILL'), killGraceMs)
    }
    const timer = setTimeout(() => {
      timedOut = true
      stop()
    }, options.timeoutMs)
    const onAbort = () => {
      aborted = true
      stop()
    }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    child.stdout.on('data', (chunk: Buffer) => output.add(chunk))
    child.stderr.on('data', (chunk: Buffer) => output.add(chunk))
    child.once('error', (error) => {
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      reject(error)
    })
    child.once('exit', (exitCode, exitSignal) => {
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      // A process the command left behind may hold the pipes open: stop it, and do not wait for it.
      if (timedOut || aborted) killGroup(child.pid, 'SIGKILL')
      const finish = () => {
        clearTimeout(killTimer)
        child.stdout.destroy()
        child.stderr.destroy()
        resolve({
          output: output.text(),
          exitCode: exitCode ?? undefined,
          signal: exitSignal ?? undefined,
          timedOut,
          aborted,
        })
      }
      if (child.stdout.readableEnded && child.stderr.readableEnded) return finish()
      const wait = setTimeout(finish, 500)
      child.once('close', () => {
        clearTimeout(wait)
        finish()
      })
    })
  })
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is already gone.
  }
}

/** Keeps the head and the tail of a stream of bytes, and counts what was left out between them. */
export class OutputCap {
  readonly #headLimit: number
  readonly #tailLimit: number
  #head: Buffer[] = []
  #headBytes = 0
  #tail: Buffer[] = []
  #tailBytes = 0
  #omitted = 0

  constructor(maxBytes: number) {
    this.#headLimit = Math.floor(maxBytes / 3)
    this.#tailLimit = maxBytes - this.#headLimit
  }

  add(chunk: Buffer): void {
    if (this.#headBytes < this.#headLimit) {
      const take = chunk.subarray(0, this.#headLimit - this.#headBytes)
      this.#head.push(take)
      this.#headBytes += take.length
      chunk = chunk.subarray(take.length)
    }
    if (chunk.length === 0) return
    this.#tail.push(chunk)
    this.#tailBytes += chunk.length
    while (this.#tailBytes > this.#tailLimit) {
      const first = this.#tail[0]!
      const excess = this.#tailBytes - this.#tailLimit
      if (first.length <= excess) {
        this.#tail.shift()
        this.#tailBytes -= first.length
        this.#omitted += first.length
      } else {
        this.#tail[0] = first.subarray(excess)
        this.#tailBytes -= excess
        this.#omitted += excess
      }
    }
  }

  text(): string {
    const head = Buffer.concat(this.#head).toString('utf8')
    const tail = Buffer.concat(this.#tail).toString('utf8')
    if (this.#omitted === 0) return head + tail
    return `${head}\n[… ${this.#omitted} bytes of output left out …]\n${tail}`
  }
}
