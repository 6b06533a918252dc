import type { RequestId } from '@modelcontextprotocol/sdk/types.js'
import { type McpStdioServerOptions, maxMessageBytesOf } from './options.js'
import { StdioClientTransport } from './stdio-transport.js'

/** The most of a child's stderr kept for error messages. */
const STDERR_TAIL = 4_000

/** A server child process behind its stdio transport, with what we need to report on and reap it. */
export interface StdioServer {
  readonly transport: StdioClientTransport
  /** The child's pid once started. */
  pid(): number | undefined
  /** Whether the child exited (a server may close its stdout and run on). */
  exited(): boolean
  /**
   * The end of what the child wrote to stderr, trimmed, starting at a whole word (redaction finds
   * whole credentials only); `''` for nothing.
   */
  stderrTail(): string
  /**
   * Stops the child and the processes it started (stdin closed, then SIGTERM, then SIGKILL) and
   * resolves once they are gone.
   */
  reap(): Promise<void>
  /**
   * Calls `onTooLarge` (once) when a line of the child's stdout grows past `maxMessageBytes`, and
   * reads nothing more from it. Set before the transport starts.
   */
  onTooLarge(listener: () => void): void
  /**
   * Calls `onMalformedAnswer` with the id of each request the child answered with a line that is
   * not valid JSON-RPC. Set before the transport starts.
   */
  onMalformedAnswer(listener: (id: RequestId) => void): void
}

/** Prepares (does not start) the child: started by the client's `connect`. */
export function stdioServer(options: McpStdioServerOptions): StdioServer {
  let tail = ''
  /** Whether `tail` lost its start: it may begin in the middle of a word, a credential's say. */
  let cut = false
  let tooLarge: (() => void) | undefined
  let malformed: ((id: RequestId) => void) | undefined
  const transport = new StdioClientTransport({
    command: options.command,
    args: options.args ?? [],
    env: options.env,
    cwd: options.cwd,
    maxMessageBytes: maxMessageBytesOf(options),
    onStderr: (text) => {
      const joined = tail + text
      cut ||= joined.length > STDERR_TAIL
      tail = joined.slice(-STDERR_TAIL)
      try {
        options.onStderr?.(text)
      } catch {
        // A logging hook must not crash the host: it throws from a stream event, out of any caller.
      }
    },
    onTooLarge: () => tooLarge?.(),
    onMalformedAnswer: (id) => malformed?.(id),
  })
  return {
    transport,
    // Kept by the transport after it closes: the SDK client may close it on its own (a failed
    // handshake) before we report on it.
    pid: () => transport.pid,
    exited: () => transport.exited,
    // Redaction finds whole credentials only: the end of one cut off at the start would be quoted.
    stderrTail: () => (cut ? tail.replace(/^\S*/, '') : tail).trim(),
    onTooLarge: (listener) => {
      tooLarge = listener
    },
    onMalformedAnswer: (listener) => {
      malformed = listener
    },
    reap: () => transport.close(),
  }
}
