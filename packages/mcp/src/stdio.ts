import type { ChildProcess } from 'node:child_process'
import type { Readable } from 'node:stream'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { lineCounter, type MessageCounter } from './message-size.js'
import { MCP_DEFAULTS, type McpStdioServerOptions } from './options.js'

/** The most of a child's stderr kept for error messages. */
const STDERR_TAIL = 4_000
/** How long after the child exits its pipes may still deliver what it wrote. */
const EXIT_GRACE_MS = 200

/** A server child process behind the SDK's stdio transport, with what we need to report on and reap it. */
export interface StdioServer {
  readonly transport: StdioClientTransport
  /** The child's pid once started. */
  pid(): number | undefined
  /** The end of what the child wrote to stderr, trimmed; `''` for nothing. */
  stderrTail(): string
  /** Stops the child (stdin closed, then SIGTERM, then SIGKILL) and resolves once it is gone. */
  reap(): Promise<void>
  /**
   * Calls `onTooLarge` (once) when a line of the child's stdout grows past `maxMessageBytes`, and
   * reads nothing more from it. Set before the transport starts.
   */
  onTooLarge(listener: () => void): void
}

/** Prepares (does not start) the child: started by the client's `connect`. */
export function stdioServer(options: McpStdioServerOptions): StdioServer {
  const transport = new StdioClientTransport({
    command: options.command,
    args: [...(options.args ?? [])],
    ...(options.env === undefined ? {} : { env: { ...options.env } }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    // Piped, never inherited: a server's logs must not land in the host's terminal unasked.
    stderr: 'pipe',
    // `maxMessageBytes` governs (see `limitLines`): the SDK's own cap (10 MB by default) would
    // refuse smaller messages than the host allowed, and end the connection as if the server exited.
    maxBufferSize: Number.POSITIVE_INFINITY,
  })
  let tail = ''
  transport.stderr?.on('data', (chunk: Buffer | string) => {
    const text = chunk.toString()
    tail = (tail + text).slice(-STDERR_TAIL)
    try {
      options.onStderr?.(text)
    } catch {
      // A logging hook must not crash the host: it throws from a stream event, out of any caller.
    }
  })
  // Noted once spawned: the transport forgets the child when it closes, and the SDK client may
  // close it on its own (a failed handshake) before we reap.
  let pid: number | undefined
  let tooLarge: (() => void) | undefined
  const start = transport.start.bind(transport)
  transport.start = async () => {
    await start()
    pid = transport.pid ?? undefined
    const child = (transport as unknown as { _process?: ChildProcess })._process
    const stdout = child?.stdout
    if (stdout)
      limitLines(stdout, lineCounter(options.maxMessageBytes ?? MCP_DEFAULTS.maxMessageBytes), () =>
        tooLarge?.(),
      )
    // The transport ends when the child's pipes close, which a process the server started and
    // that shares them (a browser, a language server) can delay forever: once the server itself
    // exited, and what it wrote had time to arrive, close them so its calls fail instead of hanging.
    child?.once('exit', () => {
      setTimeout(() => {
        child.stdout?.destroy()
        child.stderr?.destroy()
      }, EXIT_GRACE_MS).unref()
    })
  }
  return {
    transport,
    pid: () => pid,
    stderrTail: () => tail.trim(),
    onTooLarge: (listener) => {
      tooLarge = listener
    },
    async reap() {
      await transport.close()
      if (pid !== undefined) await waitForExit(pid)
    },
  }
}

/**
 * Stops `stdout` before it delivers the chunk that makes a line too long. Its `emit` is wrapped
 * because the SDK reads the stream with a `data` listener of its own, and a listener cannot keep a
 * chunk from the others: the SDK would still parse a message that ends in that very chunk.
 */
function limitLines(stdout: Readable, overLimit: MessageCounter, onTooLarge: () => void): void {
  const emit = stdout.emit.bind(stdout) as (event: string | symbol, ...args: unknown[]) => boolean
  let tripped = false
  stdout.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event === 'data') {
      if (tripped) return false
      if (overLimit(args[0] as Uint8Array)) {
        tripped = true
        // What the SDK buffered of the line is let go with the transport, which the listener closes.
        stdout.destroy()
        onTooLarge()
        return false
      }
    }
    return emit(event, ...args)
  }) as Readable['emit']
}

/**
 * Waits until process `pid` is gone. The transport's close sends SIGKILL last without waiting for
 * it to land, and does nothing when the SDK already closed it; this makes `close()` mean "the
 * process no longer exists": SIGTERM after 2 s, SIGKILL after 3 s, as the transport does.
 */
async function waitForExit(pid: number): Promise<void> {
  for (let waited = 0; waited < 5_000; waited += 10) {
    if (!isAlive(pid)) return
    if (waited === 2_000) signal(pid, 'SIGTERM')
    if (waited === 3_000) signal(pid, 'SIGKILL')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {
    // Already gone.
  }
}
