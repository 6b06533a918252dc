import type { ChildProcess } from 'node:child_process'
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { isJSONRPCRequest, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js'
import spawn from 'cross-spawn'
import { lineReader } from './line-reader.js'
import { type ProcessTree, processTree, reapTree, stopOnHostExit } from './process-tree.js'

/** After stdin closes, how long the server has to exit by itself before SIGTERM. */
const STDIN_GRACE_MS = 2_000
/** After the server exits, how long its pipes may still deliver what it wrote. */
const EXIT_GRACE_MS = 200
/** Once the tree is gone, how long its pipes may take to report closing. */
const PIPES_CLOSE_MS = 1_000
/** How often a running server's descendants are noted between requests (where that is cheap). */
const FOLLOW_EVERY_MS = 1_000

/** What starts a server and what its transport reports besides messages. */
export interface StdioTransportOptions {
  readonly command: string
  readonly args: readonly string[]
  /** Added to the SDK's default environment (`PATH`, `HOME`...), as the SDK's transport does. */
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
  /** The longest line read from stdout (see `lineReader`). */
  readonly maxMessageBytes: number
  /** What the server writes to stderr, as it arrives. */
  readonly onStderr: (text: string) => void
  /** Once, when a line of stdout grew past `maxMessageBytes`: stdout is read no further. */
  readonly onTooLarge: () => void
  /** An answer to request `id` that is not valid JSON-RPC (see `answeredId`). */
  readonly onMalformedAnswer: (id: RequestId) => void
}

/**
 * An MCP client transport over a child process's stdin and stdout, one JSON-RPC message per line,
 * in place of the SDK's `StdioClientTransport`: it spawns the same way (`cross-spawn`, the same
 * environment rule), and in addition reads lines in linear time with `maxMessageBytes` enforced as
 * they arrive, and stops the processes the server started with it (see `ProcessTree`) rather
 * than the server alone.
 *
 * `close()` notes the server's descendants, closes stdin, sends SIGTERM to all 2 s later and
 * SIGKILL 2 s after that, and resolves once they are gone. The descendants are also noted at each
 * request sent, and on Linux every second between requests: a server that exits by itself has
 * those of them still running (the same processes, not later ones given their pids) stopped the
 * same way once its last output had time to arrive (200 ms), and its pipes closed, which
 * processes it started may hold.
 */
export class StdioClientTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined

  readonly #options: StdioTransportOptions
  #child: ChildProcess | undefined
  #tree: ProcessTree | undefined
  #forgetHostExit: (() => void) | undefined
  #stopFollowing: (() => void) | undefined
  /** When close() was called, and when the server exited (`Date.now()`); `Infinity`: not yet. */
  #closeAt = Number.POSITIVE_INFINITY
  #exitAt = Number.POSITIVE_INFINITY
  /** Settles on the child's `close` event: it exited and its pipes are closed. */
  #pipesClosed: Promise<void> | undefined
  #ended = false
  /** Whether `onclose` was called: once, by whichever comes first of the ends below. */
  #toldClosed = false
  #reaping: Promise<boolean> | undefined
  #closing: Promise<void> | undefined

  constructor(options: StdioTransportOptions) {
    this.#options = options
  }

  /** The server's process id once spawned. */
  get pid(): number | undefined {
    return this.#child?.pid
  }

  /** Whether the server process has exited (as opposed to closing its stdout and running on). */
  get exited(): boolean {
    return this.#exitAt !== Number.POSITIVE_INFINITY
  }

  start(): Promise<void> {
    if (this.#child) return Promise.reject(new Error('StdioClientTransport already started'))
    const options = this.#options
    const child = spawn(options.command, [...options.args], {
      env: { ...getDefaultEnvironment(), ...options.env },
      // Piped, never inherited: a server's logs must not land in the host's terminal unasked.
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: process.platform === 'win32',
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    })
    this.#child = child
    // Known at once when the spawn worked: close() may come before the `spawn` event.
    if (child.pid !== undefined) {
      const tree = processTree(child, child.pid)
      this.#tree = tree
      this.#forgetHostExit = stopOnHostExit(tree)
      this.#stopFollowing = tree.followEvery(FOLLOW_EVERY_MS)
    }
    this.#pipesClosed = new Promise((resolve) => {
      child.once('close', () => {
        this.#ended = true
        if (this.#tree?.alive() !== true) this.#forgetHostExit?.()
        resolve()
        this.#tellClosed()
      })
    })
    child.once('exit', () => this.#exited())
    // A server that closes its stdout can answer nothing more, even if it runs on: the transport
    // ends then (its calls fail instead of waiting for their time limit) and close() stops it.
    // Its last words on stderr get the time they get after an exit.
    child.stdout?.once('end', () => {
      setTimeout(() => {
        if (!this.#closing) this.#tellClosed()
      }, EXIT_GRACE_MS).unref()
    })
    const read = lineReader({
      maxLineBytes: options.maxMessageBytes,
      onLine: (line) => this.#receive(line),
      onTooLarge: () => {
        // What was buffered of the line is dropped; the pipe closing ends the transport.
        child.stdout?.destroy()
        options.onTooLarge()
      },
    })
    child.stdout?.on('data', read)
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', options.onStderr)
    for (const stream of [child.stdin, child.stdout, child.stderr]) {
      stream?.on('error', (error) => this.onerror?.(error))
    }
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve())
      child.on('error', (error) => {
        reject(error)
        this.onerror?.(error)
      })
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin
    if (!stdin?.writable || this.#closing) return Promise.reject(new Error('Not connected'))
    // What a server starts, it mostly starts for a request: noted at each one, what it started
    // is stopped with it should it exit by itself.
    if (isJSONRPCRequest(message)) this.#tree?.follow()
    return new Promise((resolve, reject) => {
      if (stdin.write(serializeMessage(message))) return resolve()
      // Waits for the server to read what is queued, unless the pipe closes first.
      const settle = (error?: Error) => {
        stdin.off('drain', drained)
        stdin.off('close', closed)
        if (error) reject(error)
        else resolve()
      }
      const drained = () => settle()
      const closed = () => settle(new Error('Not connected'))
      stdin.once('drain', drained)
      stdin.once('close', closed)
    })
  }

  /** Stops the server's tree; resolves once it is gone (see the class). Safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= this.#stop()
    return this.#closing
  }

  async #stop(): Promise<void> {
    const child = this.#child
    if (!child || !this.#tree) return
    this.#closeAt = Date.now()
    // Before stdin closes: a server that exits on it leaves its descendants to another parent.
    this.#tree.survey()
    child.stdin?.end()
    const gone = await this.#reap()
    // Pipes still open belong to a process outside the tree (one the server started and that left
    // it, or any on Windows): they must not keep the transport open.
    if (gone && !this.#ended) this.#destroyPipes()
    await Promise.race([this.#pipesClosed, delay(PIPES_CLOSE_MS)])
  }

  #reap(): Promise<boolean> {
    const tree = this.#tree
    if (!tree) return Promise.resolve(true)
    this.#reaping ??= reapTree(tree, () =>
      Math.min(this.#closeAt + STDIN_GRACE_MS, this.#exitAt + EXIT_GRACE_MS),
    ).then((gone) => {
      if (gone) this.#forgetHostExit?.()
      return gone
    })
    return this.#reaping
  }

  /**
   * The server exited. Processes it started that share its pipes (a browser, a language server)
   * would keep the transport open for ever: once what it wrote had time to arrive, close the
   * pipes so that its calls fail instead of hanging, and stop those of its descendants noted
   * last (at a request, or by the periodic note) that still run (see `ProcessTree`).
   */
  #exited(): void {
    this.#exitAt = Date.now()
    this.#stopFollowing?.()
    setTimeout(() => {
      if (!this.#ended) this.#destroyPipes()
      void this.#reap()
    }, EXIT_GRACE_MS).unref()
  }

  #tellClosed(): void {
    if (this.#toldClosed) return
    this.#toldClosed = true
    this.onclose?.()
  }

  #destroyPipes(): void {
    const child = this.#child
    child?.stdin?.destroy()
    child?.stdout?.destroy()
    child?.stderr?.destroy()
  }

  /** One line of stdout: a message, or an error reported as the SDK's transport reports it. */
  #receive(line: string): void {
    let message: JSONRPCMessage
    try {
      message = deserializeMessage(line)
    } catch (error) {
      this.onerror?.(error as Error)
      // Dropped, an answer would leave its request waiting until its time limit.
      const id = answeredId(line)
      if (id !== undefined) this.#options.onMalformedAnswer(id)
      return
    }
    this.onmessage?.(message)
  }
}

/**
 * The request id a line answers, when it reads as an answer (JSON with an `id` and a `result` or
 * an `error`, no `method`) though not as JSON-RPC 2.0 (no `"jsonrpc": "2.0"`, say); else
 * `undefined` (a log line, a request or notification of the server's).
 */
function answeredId(line: string): RequestId | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(line)
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const { id } = parsed as { id?: unknown }
  if (typeof id !== 'string' && typeof id !== 'number') return undefined
  if ('method' in parsed || !('result' in parsed || 'error' in parsed)) return undefined
  return id
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
