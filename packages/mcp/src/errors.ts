const MCP_CONNECTION_ERROR = Symbol.for('kode.McpConnectionError')

/** Why an MCP server could not be used, one value per failure a host may handle differently. */
export type McpConnectionErrorCode =
  /** The options name no server (`command` or `url`), or both, or an unusable value. */
  | 'invalid_options'
  /** The server's command could not be started (not found, not executable...). */
  | 'spawn_failed'
  /** The server could not be reached, or refused the connection (HTTP status in the message). */
  | 'connect_failed'
  /** The server did not answer `initialize` within `connectTimeoutMs`. */
  | 'initialize_timeout'
  /**
   * The server exited or closed the connection before it was ready, or was found gone while its
   * tools were listed (its notification stream lost for good, say), as a connected one would be.
   */
  | 'closed'
  /** The server answered `initialize` but its tool list could not be read, the connection still up. */
  | 'list_failed'
  /**
   * The server sent a message larger than `maxMessageBytes` (or never ended one): it was not read
   * any further, and the connection was closed.
   */
  | 'message_too_large'
  /**
   * The server answered a request with a redirect to another origin (scheme, host or port), which
   * is not followed: the request and the headers configured for the server would go there.
   */
  | 'redirect_refused'
  /** The host aborted the connection attempt with `signal`. */
  | 'aborted'

/**
 * An MCP server could not be connected, or its tools listed. Failures of single tool calls are
 * never thrown: they become `error` tool results the model reads. `McpConnectionError.is(e)`
 * recognises one from any copy of this package.
 */
export class McpConnectionError extends Error {
  override readonly name = 'McpConnectionError'
  readonly code: McpConnectionErrorCode
  /** The `name` the server was given in the options. */
  readonly serverName: string
  readonly [MCP_CONNECTION_ERROR] = true

  constructor(
    code: McpConnectionErrorCode,
    serverName: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.serverName = serverName
  }

  /** True for an `McpConnectionError` from any copy of this package. */
  static is(value: unknown): value is McpConnectionError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[MCP_CONNECTION_ERROR] === true
    )
  }
}

/** An error's message for a sentence, whatever was thrown. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name
  return String(error)
}

/** `fetch failed: connect ECONNREFUSED ...`: fetch's own messages say little without their cause's. */
export function detailOf(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined
  return cause instanceof Error ? `${messageOf(error)}: ${messageOf(cause)}` : messageOf(error)
}
