import { statSync } from 'node:fs'
import { redactCause } from '@kode/providers/adapter'
import { McpError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'
import { unansweredBecause } from './answer-guard.js'
import { type McpConnection, ServerConnection } from './connection.js'
import { lossError } from './connection-loss.js'
import { detailOf, McpConnectionError, messageOf } from './errors.js'
import { httpKinds, httpStatusOf, httpTransport, suggestsSse } from './http.js'
import { createLink, type Link, MAX_TIMER_MS } from './link.js'
import {
  MCP_DEFAULTS,
  type McpHttpServerOptions,
  type McpServerOptions,
  type McpStdioServerOptions,
  maxMessageBytesOf,
} from './options.js'
import { requestSignal } from './request-signal.js'
import { safeConnectionError, serverSecrets } from './secrets.js'
import { stdioServer } from './stdio.js'

/**
 * Connects to an MCP server and reads its tools: a local one started as a child process
 * (`command`) or a remote one (`url`, streamable HTTP with a fallback to HTTP+SSE). Resolves once
 * the server answered `initialize` and `tools/list`; rejects with an `McpConnectionError` (the
 * server could not start, did not answer in time, exited...), having stopped whatever it started.
 *
 * ```ts
 * const fs = await connectMcpServer({ name: 'fs', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', dir] })
 * const agent = createAgent({ client, store, tools: fs.tools })
 * fs.onToolsChanged((tools) => agent.setTools(tools))
 * // ...
 * await fs.close()
 * ```
 */
export async function connectMcpServer(options: McpServerOptions): Promise<McpConnection> {
  checkOptions(options)
  const secrets = serverSecrets(options)
  try {
    return await connect(options)
  } catch (error) {
    // A server may have echoed what it was given (a 401 body, its stderr): not into the error.
    throw McpConnectionError.is(error) ? safeConnectionError(error, secrets) : redactCause(error, secrets)
  }
}

async function connect(options: McpServerOptions): Promise<McpConnection> {
  const { name } = options
  const timeoutMs = options.connectTimeoutMs ?? MCP_DEFAULTS.connectTimeoutMs
  const timeout = new AbortController()
  // Longer than a timer holds (Infinity, say) is no limit: a timer would fire at once instead.
  const timer = timeoutMs <= MAX_TIMER_MS ? setTimeout(() => timeout.abort(), timeoutMs) : undefined
  // The attempt's own signal, let go once it is over: aborting `options.signal` after connecting
  // must not cancel `initialize` (see `requestSignal`).
  const attempt = requestSignal(
    options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal,
  )
  const { signal } = attempt
  let link: Link | undefined
  try {
    link = await handshake(options, signal)
    return await ServerConnection.open(options, link, signal)
  } catch (error) {
    await link?.shutdown()
    if (McpConnectionError.is(error)) throw error
    if (options.signal?.aborted) {
      throw new McpConnectionError('aborted', name, `connecting to MCP server "${name}" was aborted`, {
        cause: error,
      })
    }
    if (timeout.signal.aborted) {
      throw new McpConnectionError(
        'initialize_timeout',
        name,
        `MCP server "${name}" did not get ready within ${timeoutMs} ms (no answer to initialize or tools/list)`,
        { cause: error },
      )
    }
    throw error
  } finally {
    clearTimeout(timer)
    attempt.release()
  }
}

function checkOptions(options: McpServerOptions): void {
  const name = (options as { name?: unknown }).name
  if (typeof name !== 'string' || name.trim() === '') {
    throw new McpConnectionError('invalid_options', String(name), 'an MCP server needs a non-empty name')
  }
  const hasCommand = typeof options.command === 'string' && options.command !== ''
  const hasUrl = options.url !== undefined
  if (hasCommand === hasUrl) {
    throw new McpConnectionError(
      'invalid_options',
      name,
      `MCP server "${name}" needs either a command (stdio) or a url (HTTP), not ${hasUrl ? 'both' : 'neither'}`,
    )
  }
  const { maxMessageBytes } = options
  if (
    maxMessageBytes !== undefined &&
    !(maxMessageBytes > 0 && (Number.isInteger(maxMessageBytes) || maxMessageBytes === Infinity))
  ) {
    throw new McpConnectionError(
      'invalid_options',
      name,
      `MCP server "${name}" has an invalid maxMessageBytes (a positive whole number of bytes, or Infinity)`,
    )
  }
  // Checked here, not first by each tool's definition once the server is up and listed its tools.
  for (const field of ['connectTimeoutMs', 'toolTimeoutMs'] as const) {
    const ms = options[field]
    if (ms !== undefined && !(typeof ms === 'number' && ms > 0)) {
      throw new McpConnectionError(
        'invalid_options',
        name,
        `MCP server "${name}" has an invalid ${field} (a positive number of milliseconds, or Infinity)`,
      )
    }
  }
  if (hasUrl && !URL.canParse(String(options.url))) {
    throw new McpConnectionError('invalid_options', name, `MCP server "${name}" has an invalid url`)
  }
  if (hasUrl) checkSecrets(name, options as McpHttpServerOptions)
}

/**
 * Refuses what `fetch` would refuse with an error quoting a secret: a url with a user name or
 * password, a header it cannot send (a token with a line break). The message names neither value.
 */
function checkSecrets(name: string, options: McpHttpServerOptions): void {
  const url = new URL(String(options.url))
  if (url.username !== '' || url.password !== '') {
    throw new McpConnectionError(
      'invalid_options',
      name,
      `MCP server "${name}" has a user name or password in its url: send credentials in headers instead`,
    )
  }
  for (const header of Object.keys(options.headers ?? {})) {
    try {
      new Headers({ [header]: String(options.headers?.[header]) })
    } catch {
      throw new McpConnectionError(
        'invalid_options',
        name,
        `MCP server "${name}" has a header "${header}" that cannot be sent (invalid name or value)`,
      )
    }
  }
}

/** Starts the transport and runs `initialize`, trying the HTTP transports in turn. */
async function handshake(options: McpServerOptions, signal: AbortSignal): Promise<Link> {
  if (options.command !== undefined) {
    const stdio = stdioServer(options)
    const link = createLink(
      (lose, answers) => {
        stdio.onTooLarge(() => lose({ kind: 'oversized', limit: maxMessageBytesOf(options) }))
        stdio.onMalformedAnswer((id) => answers.unanswered([id], 'malformed'))
        return stdio.transport
      },
      'stdio',
      stdio,
      options,
    )
    try {
      await link.client.connect(link.transport, { signal, timeout: MAX_TIMER_MS })
      return link
    } catch (error) {
      await link.shutdown()
      throw signal.aborted ? error : handshakeError(options, error, link)
    }
  }
  const http = options as McpHttpServerOptions
  const kinds = httpKinds(http)
  /** What streamable HTTP failed with, when HTTP+SSE is tried after it. */
  let fellBackFrom: unknown
  for (const [i, kind] of kinds.entries()) {
    const link = createLink(
      (lose, answers) => httpTransport(http, kind, lose, answers),
      kind,
      undefined,
      options,
    )
    try {
      await link.client.connect(link.transport, { signal, timeout: MAX_TIMER_MS })
      return link
    } catch (error) {
      await link.shutdown()
      if (i < kinds.length - 1 && suggestsSse(error) && !signal.aborted && !link.loss()) {
        fellBackFrom = error
        continue
      }
      throw signal.aborted ? error : handshakeError(options, error, link, fellBackFrom)
    }
  }
  throw new McpConnectionError('invalid_options', options.name, 'no transport to try')
}

/**
 * A failed handshake as a typed error, quoting what a dead child said on stderr, or what the
 * streamable-HTTP attempt failed with (`fellBackFrom`) before HTTP+SSE failed too: the fallback's
 * error alone ("SSE error: 404") hides what the server said first, often the reason.
 */
function handshakeError(
  options: McpServerOptions,
  error: unknown,
  link: Link,
  fellBackFrom?: unknown,
): McpConnectionError {
  if (McpConnectionError.is(error)) return error
  const { name } = options
  const { stdio } = link
  const loss = link.loss()
  if (loss?.kind === 'oversized') return lossError(name, loss)
  const code = (error as { code?: unknown } | undefined)?.code
  if (stdio && (code === 'ENOENT' || code === 'EACCES' || stdio.pid() === undefined)) {
    // A missing working directory fails the spawn with ENOENT naming the command, which exists.
    const { cwd } = options as McpStdioServerOptions
    const why =
      code === 'ENOENT' && cwd !== undefined && !isDirectory(cwd)
        ? `its working directory (cwd) ${cwd} is not a directory`
        : messageOf(error)
    return new McpConnectionError('spawn_failed', name, `MCP server "${name}" could not be started: ${why}`, {
      cause: error,
    })
  }
  // Kode's marker, not the code: a server may answer initialize with -32000 as its own error.
  if (unansweredBecause(error)?.why === 'closed') {
    const said = stdio?.stderrTail()
    return new McpConnectionError(
      'closed',
      name,
      `MCP server "${name}" closed the connection before answering initialize${said ? `; its stderr ends: ${said}` : ''}`,
      { cause: error },
    )
  }
  if (error instanceof McpError) {
    return new McpConnectionError(
      'connect_failed',
      name,
      `MCP server "${name}" answered initialize with an error: ${messageOf(error)}`,
      { cause: error },
    )
  }
  // The SDK's words for a version it does not speak (an Error like any other): the server was
  // reached, and answered.
  const version = /^Server's protocol version is not supported: (.*)$/s.exec(messageOf(error))?.[1]
  if (version !== undefined) {
    return new McpConnectionError(
      'connect_failed',
      name,
      `MCP server "${name}" answered initialize with protocol version ${version}, which Kode does not speak (it speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      { cause: error },
    )
  }
  if (fellBackFrom !== undefined) {
    return new McpConnectionError(
      'connect_failed',
      name,
      `MCP server "${name}" could not be connected over streamable HTTP (${withStatus(fellBackFrom)}) nor over HTTP+SSE (${detailOf(error)})`,
      { cause: error },
    )
  }
  const status = httpStatusOf(error)
  if (status !== undefined) {
    return new McpConnectionError(
      'connect_failed',
      name,
      `MCP server "${name}" refused the connection (HTTP ${status}): ${messageOf(error)}`,
      { cause: error },
    )
  }
  return new McpConnectionError(
    'connect_failed',
    name,
    `MCP server "${name}" could not be reached: ${detailOf(error)}`,
    { cause: error },
  )
}

/** `detailOf(error)`, led by the HTTP status it carries, if any. */
function withStatus(error: unknown): string {
  const status = httpStatusOf(error)
  return status === undefined ? detailOf(error) : `HTTP ${status}: ${detailOf(error)}`
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}
