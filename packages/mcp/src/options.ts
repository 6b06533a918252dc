/** What a host learns of one of a server's tools (from `tools/list`), besides the Kode tool. */
export interface McpToolInfo {
  /** The tool's name on the server (what `tools/call` is sent). */
  readonly serverToolName: string
  /** The Kode tool's name: prefixed, unique, made of the characters every provider accepts. */
  readonly name: string
  /** The server's human-readable title, when it sent one. */
  readonly title?: string
  /** The server's hints (`readOnlyHint`, `destructiveHint`...), as sent; hints, not guarantees. */
  readonly annotations?: Readonly<Record<string, unknown>>
}

/**
 * Whether a call needs the user's approval before it runs: `true` for every tool of the server,
 * a list of the server's tool names (as the server names them), or a function of the tool and the
 * call's arguments.
 */
export type McpApproval =
  | boolean
  | readonly string[]
  | ((tool: McpToolInfo, args: Record<string, unknown>) => boolean | Promise<boolean>)

/** Options every server takes, whatever its transport. */
export interface McpCommonOptions {
  /** Names the server in tool names, errors and logs. Required, non-empty. */
  name: string
  /**
   * Put before each tool's name so that tools of several servers cannot clash. Default
   * `${name}__` (`everything__echo`); `''` keeps the server's names as they are.
   */
  toolPrefix?: string
  /** Which of the server's tools to offer, by the server's tool name. Default: all. */
  filter?: (tool: { name: string; description?: string }) => boolean
  /** Approval before calls run (see `McpApproval`). Default: none. */
  needsApproval?: McpApproval
  /**
   * Time for the whole connection (start, `initialize`, first `tools/list`) before it fails with
   * an `McpConnectionError` (`initialize_timeout`), and for each later `tools/list`. Default
   * 60,000 ms; `Infinity` for no limit.
   */
  connectTimeoutMs?: number
  /**
   * A tool call's time limit, overriding the agent's `toolTimeoutMs` for this server's tools: a
   * positive number of milliseconds, or `Infinity` for none.
   */
  toolTimeoutMs?: number
  /**
   * Aborting it abandons a connection attempt (and stops the server it started). Once connected,
   * aborting it does nothing.
   */
  signal?: AbortSignal
  /**
   * The largest message read from the server, in bytes (a stdio line, an event of an HTTP event
   * stream, a JSON answer). A larger one (or one that never ends) is not read further: the
   * connection closes, and calls in flight and later fail with `message_too_large`, so a faulty
   * or hostile server cannot grow the host's memory without bound. Default 32 MiB.
   */
  maxMessageBytes?: number
  /** Sees every JSON-RPC message exchanged, for logging and debugging. Must not throw. */
  onMessage?: (direction: 'send' | 'receive', message: unknown) => void
}

/** A local server: a command started as a child process, spoken to over its stdin and stdout. */
export interface McpStdioServerOptions extends McpCommonOptions {
  /** The program to run (`node`, `npx`, `uvx`, an absolute path...). No shell is involved. */
  command: string
  args?: readonly string[]
  /**
   * Variables for the child, added to a minimal environment (`PATH`, `HOME` and the like): the
   * host's other variables, API keys among them, are not passed on unless listed here.
   */
  env?: Readonly<Record<string, string>>
  /** The child's working directory. Default: the host's. */
  cwd?: string
  /**
   * Receives what the child writes to stderr (its logs). The last few kilobytes are also kept and
   * quoted in errors when the server exits. Default: not shown.
   */
  onStderr?: (text: string) => void
  url?: never
}

/** A remote server over streamable HTTP, falling back to the older HTTP+SSE transport. */
export interface McpHttpServerOptions extends McpCommonOptions {
  /** The server's endpoint (`https://example.com/mcp`). */
  url: string | URL
  /** Sent with every request (`Authorization`...). Never printed or persisted by Kode. */
  headers?: Readonly<Record<string, string>>
  /**
   * `auto` (the default) tries streamable HTTP and falls back to HTTP+SSE when the server answers
   * the first request with 400, 404 or 405, as older servers do; or pin one.
   */
  transport?: 'auto' | 'streamable-http' | 'sse'
  /** The `fetch` to use. Default: the global one. */
  fetch?: typeof fetch
  command?: never
}

/** What `connectMcpServer` takes: a local (stdio) or a remote (HTTP) server. */
export type McpServerOptions = McpStdioServerOptions | McpHttpServerOptions

/** The largest message read from a server of `options` (see `maxMessageBytes`), the default filled in. */
export function maxMessageBytesOf(options: McpCommonOptions): number {
  return options.maxMessageBytes ?? MCP_DEFAULTS.maxMessageBytes
}

/** Defaults of the time limits and of the message size limit. */
export const MCP_DEFAULTS = Object.freeze({ connectTimeoutMs: 60_000, maxMessageBytes: 32 * 1024 * 1024 })
