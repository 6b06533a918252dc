import type { Tool } from '@kode/core'
import { cutText } from '@kode/protocol/helpers'
import { redact, redactCause } from '@kode/providers/adapter'
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ProgressNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import * as z from 'zod/v4'
import { unansweredBecause } from './answer-guard.js'
import { approvalFor } from './approval.js'
import { lossError } from './connection-loss.js'
import { McpConnectionError, messageOf } from './errors.js'
import { httpStatusOf } from './http.js'
import { type Link, MAX_TIMER_MS } from './link.js'
import { LIST_RESULT, readTool } from './listed-tools.js'
import {
  describeProgress,
  type ListedTool,
  PROGRESS_TEXT_LIMIT,
  type ToolCaller,
  toKodeTool,
} from './mcp-tool.js'
import { MCP_DEFAULTS, type McpServerOptions, type McpToolInfo } from './options.js'
import { ProgressRelay } from './progress-relay.js'
import { requestSignal } from './request-signal.js'
import { safeConnectionError, safeToolOutput, serverSecrets } from './secrets.js'
import { statusDetail } from './stream-opening.js'
import { defaultPrefix, kodeToolNames } from './tool-names.js'
import type { CallResult } from './tool-result.js'

/**
 * A `tools/call` result as the SDK reads it, but taking content blocks of any type or shape (even
 * without a type), and structured content of any JSON type: a part the model cannot use becomes a
 * note in the output, or goes unused, instead of failing the whole result.
 */
const CALL_RESULT = CallToolResultSchema.extend({
  content: z.array(z.unknown()).default([]),
  structuredContent: z.unknown().optional(),
}) as unknown as typeof CallToolResultSchema

/** What a server said about itself in `initialize`. */
export interface McpServerInfo {
  readonly name: string
  readonly version: string
  /** How to use the server, for the model's system prompt if the host wants it. */
  readonly instructions: string | undefined
}

/**
 * A connected MCP server: its tools as Kode tools, kept current, and `close()`. Made by
 * `connectMcpServer`.
 */
export interface McpConnection {
  /** The `name` given in the options. */
  readonly name: string
  /** `stdio`, `streamable-http` or `sse`: how the server is spoken to. */
  readonly transport: 'stdio' | 'streamable-http' | 'sse'
  /** The server's name, version and instructions from `initialize`. */
  readonly server: McpServerInfo
  /** The server's tools as Kode tools, named `${toolPrefix}${tool}`; replaced when the server's list changes. */
  readonly tools: readonly Tool[]
  /** What the server said of each tool in `tools`, in the same order. */
  readonly toolInfo: readonly McpToolInfo[]
  /** The server child's process id (stdio servers), for a host's bookkeeping. */
  readonly pid: number | undefined
  /** Whether calls can still reach the server: false after `close()` or once the server is gone. */
  readonly connected: boolean
  /**
   * Reads the tool list again (done by itself when the server announces a change). Resolves with
   * the new tools; rejects if the server does not answer within `connectTimeoutMs`, keeping the
   * old ones. Calls made while a read is under way share it; `signal` stops the caller's own wait
   * (rejecting with its reason), not the read the others wait for.
   */
  refresh(options?: { signal?: AbortSignal }): Promise<readonly Tool[]>
  /**
   * Calls `listener` with the new tools whenever the list changes; returns the unsubscribe
   * function. Typical use: `mcp.onToolsChanged(() => agent.setTools([...mine, ...mcp.tools]))`,
   * which an agent applies from its next model call on.
   */
  onToolsChanged(listener: (tools: readonly Tool[]) => void): () => void
  /**
   * Calls `listener` once when the connection ends: with an `McpConnectionError` if the server went
   * away (`closed`, or `message_too_large` when it sent a message over `maxMessageBytes`), with
   * `undefined` after `close()`. On a connection that has already ended, it is called all the same,
   * just after (a microtask). Returns the unsubscribe function.
   */
  onClose(listener: (error: McpConnectionError | undefined) => void): () => void
  /**
   * Ends the connection: calls in flight fail, an HTTP session is ended, a child process is
   * stopped (stdin closed, then SIGTERM, then SIGKILL) and the promise resolves once it is gone.
   * Safe to call more than once, and after the server went away.
   */
  close(): Promise<void>
}

/** The one implementation of `McpConnection`, over a link that finished `initialize`. */
export class ServerConnection implements McpConnection {
  readonly name: string
  readonly transport: 'stdio' | 'streamable-http' | 'sse'
  readonly server: McpServerInfo
  readonly #options: McpServerOptions
  readonly #link: Link
  #tools: readonly Tool[] = []
  #info: readonly McpToolInfo[] = []
  /** The last `tools/list` answer, as JSON: what tells a real change from an announced one. */
  #listing: string | undefined
  readonly #toolListeners = new Set<(tools: readonly Tool[]) => void>()
  readonly #closeListeners = new Set<(error: McpConnectionError | undefined) => void>()
  #refreshing: Promise<readonly Tool[]> | undefined
  #refreshAgain = false
  /** Set once the connection is over: by `close()` (`undefined` error) or by the server. */
  #ended: { error: McpConnectionError | undefined } | undefined
  /** What the server was given that its errors must not repeat (see `serverSecrets`). */
  readonly #secrets: readonly string[]
  #closing: Promise<void> | undefined
  readonly #progress = new ProgressRelay()

  private constructor(options: McpServerOptions, link: Link) {
    this.name = options.name
    this.transport = link.kind
    this.#options = options
    this.#link = link
    this.#secrets = serverSecrets(options)
    const version = link.client.getServerVersion()
    this.server = {
      name: version?.name ?? '',
      version: version?.version ?? '',
      instructions: link.client.getInstructions(),
    }
  }

  /** Wraps a link that finished `initialize`: reads the tool list and starts following changes. */
  static async open(options: McpServerOptions, link: Link, signal: AbortSignal): Promise<ServerConnection> {
    const connection = new ServerConnection(options, link)
    const { client } = link
    client.onclose = () => connection.#serverClosed()
    // In place of the SDK's relay, which drops a notification read together with the answer.
    client.setNotificationHandler(ProgressNotificationSchema, (notification) =>
      connection.#progress.dispatch(notification.params),
    )
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      // Between turns the agent picks up what listeners hand it (agent.setTools); a failed
      // refresh keeps the list it had.
      connection.refresh().catch(() => undefined)
    })
    try {
      // As a refresh, so that one a change announced meanwhile asks for comes after it, not beside
      // it: a server may answer the two out of order, and the older list would win.
      await connection.refresh({ signal })
    } catch (error) {
      if (signal.aborted) throw error
      // The connection was found gone meanwhile (its notification stream lost, say): that is
      // why, in the words a connected server's `onClose` would get.
      const loss = link.loss()
      if (loss) throw lossError(options.name, loss, error)
      throw new McpConnectionError(
        'list_failed',
        options.name,
        `MCP server "${options.name}" did not list its tools${statusOf(error)}: ${messageOf(error)}`,
        { cause: error },
      )
    }
    return connection
  }

  get tools(): readonly Tool[] {
    return this.#tools
  }

  get toolInfo(): readonly McpToolInfo[] {
    return this.#info
  }

  get pid(): number | undefined {
    return this.#link.stdio?.pid()
  }

  get connected(): boolean {
    return this.#ended === undefined
  }

  refresh(options: { signal?: AbortSignal } = {}): Promise<readonly Tool[]> {
    // A change announced during a read may not be in it: read once more afterwards.
    if (this.#refreshing) this.#refreshAgain = true
    // One read for every caller, bounded by `connectTimeoutMs`; each caller's signal stops its own
    // wait, not the read the others wait for.
    this.#refreshing ??= (async () => {
      try {
        do {
          this.#refreshAgain = false
          await this.#load()
        } while (this.#refreshAgain)
        return this.#tools
      } catch (error) {
        // The server's error may quote what it was given (see `serverSecrets`).
        throw redactCause(error, this.#secrets)
      } finally {
        this.#refreshing = undefined
      }
    })()
    return options.signal ? untilSettledOrRejected(this.#refreshing, options.signal) : this.#refreshing
  }

  onToolsChanged(listener: (tools: readonly Tool[]) => void): () => void {
    this.#toolListeners.add(listener)
    return () => this.#toolListeners.delete(listener)
  }

  onClose(listener: (error: McpConnectionError | undefined) => void): () => void {
    const ended = this.#ended
    if (ended === undefined) {
      this.#closeListeners.add(listener)
      return () => this.#closeListeners.delete(listener)
    }
    // Already over (a host subscribing after other awaits): told all the same, as later ones would
    // have been, but not from inside the call, and not once unsubscribed.
    let subscribed = true
    queueMicrotask(() => {
      if (subscribed) tell(listener, ended.error)
    })
    return () => {
      const was = subscribed
      subscribed = false
      return was
    }
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#end(undefined)
      await this.#link.shutdown()
    })()
    return this.#closing
  }

  async #load(): Promise<void> {
    const listed: ListedTool[] = []
    let cursor: string | undefined
    const cursors = new Set<string>()
    // A server that stops answering, or pages without end, must not leave a refresh (and calls
    // waiting on it) pending: the whole read has the time limit, not each page.
    const timeout = this.#options.connectTimeoutMs ?? MCP_DEFAULTS.connectTimeoutMs
    const end = Date.now() + timeout
    do {
      const left = end - Date.now()
      if (left <= 0) throw new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout })
      // Not `listTools`: its schema fails the whole page over one odd tool (see `readTool`).
      const page = await this.#link.client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        LIST_RESULT,
        { timeout: Math.min(left, MAX_TIMER_MS) },
      )
      for (const raw of page.tools) {
        const tool = readTool(raw)
        if (tool) listed.push(tool)
      }
      // A cursor seen before would page forever: a broken server's list ends there.
      cursor = page.nextCursor !== undefined && !cursors.has(page.nextCursor) ? page.nextCursor : undefined
      if (cursor !== undefined) cursors.add(cursor)
    } while (cursor !== undefined)
    // A server may announce a change that changes nothing (the reference server does, after
    // initialize): keep the tools, and do not make agents re-read an identical list.
    const listing = JSON.stringify(listed)
    if (listing === this.#listing) return
    this.#build(listed)
    // Only once built: a list whose tools could not be made (a filter that threw) is made again.
    this.#listing = listing
    // Every listener hears of the change even if one throws (an agent refusing a clashing name);
    // the first error is then the refresh's.
    let failure: { error: unknown } | undefined
    for (const listener of [...this.#toolListeners]) {
      try {
        listener(this.#tools)
      } catch (error) {
        failure ??= { error }
      }
    }
    if (failure) throw failure.error
  }

  #build(listed: readonly ListedTool[]): void {
    const options = this.#options
    const prefix = options.toolPrefix ?? defaultPrefix(options.name)
    // A tool that only runs as an MCP task (a later protocol feature) cannot be called plainly.
    const offered = listed.filter(
      (tool) =>
        tool.execution?.taskSupport !== 'required' &&
        (!options.filter || options.filter({ name: tool.name, ...describe(tool) })),
    )
    const names = kodeToolNames(
      prefix,
      offered.map((tool) => tool.name),
    )
    const tools: Tool[] = []
    const info: McpToolInfo[] = []
    for (const [i, tool] of offered.entries()) {
      const name = names[i]!
      const toolInfo: McpToolInfo = {
        serverToolName: tool.name,
        name,
        ...(tool.title === undefined ? {} : { title: tool.title }),
        ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
      }
      info.push(toolInfo)
      tools.push(
        toKodeTool(tool, toolInfo, this.#caller(), {
          timeoutMs: options.toolTimeoutMs,
          needsApproval: approvalFor(options.needsApproval, toolInfo),
        }),
      )
    }
    this.#tools = tools
    this.#info = info
  }

  #caller(): ToolCaller {
    return {
      call: async (name, args, { signal, onProgress }) => {
        if (this.#ended) throw this.#ended.error ?? new McpConnectionError('closed', this.name, 'closed')
        // Progress is kept in the history too: a credential the server quotes in it is not (found
        // whole, so before the cut), nor more than a line's worth of text.
        const progressToken = this.#progress.register((progress) =>
          onProgress(cutText(redact(describeProgress(progress), this.#secrets), PROGRESS_TEXT_LIMIT)),
        )
        // The call's signal may outlive the call (a host's): the SDK is given one of its own.
        const request = requestSignal(signal)
        const result = await this.#link.client
          .callTool({ name, arguments: args, _meta: { progressToken } }, CALL_RESULT, {
            signal: request.signal,
            timeout: MAX_TIMER_MS,
          })
          .catch((error: unknown) => {
            // A refused request fails with fetch's own error, just before the lost link closes
            // the client: end the connection now, so that this call says why, as later ones will.
            if (this.#link.loss()) this.#serverClosed()
            throw error
          })
          .finally(() => {
            request.release()
            this.#progress.release(progressToken)
          })
        // A list change the call caused was announced before its result: let the new list be read
        // first, so the next turn already offers it.
        if (this.#refreshing) await untilSettledOrAborted(this.#refreshing, signal)
        return result as CallResult
      },
      // The text is kept in the history and sent to the model: a credential the server echoed is not.
      describeFailure: (error, toolName) => redact(this.#describeFailure(error, toolName), this.#secrets),
      safeError: (output) => safeToolOutput(output, this.#secrets),
    }
  }

  #describeFailure(error: unknown, toolName: string): string {
    const server = `MCP server "${this.name}"`
    if (this.#ended) {
      if (this.#ended.error) return `${toolName} failed: ${this.#ended.error.message}`
      return `${toolName} failed: the connection to ${server} was closed`
    }
    if (McpConnectionError.is(error) && error.code === 'redirect_refused') {
      return `${toolName} failed: ${error.message}`
    }
    // Kode's own markers, not the error code: servers send -32000 (the SDK's "connection
    // closed") as a generic error of their own.
    const unanswered = unansweredBecause(error)
    if (unanswered === undefined) {
      return `${toolName} failed: ${server} answered with an error${statusOf(error)}: ${messageOf(error)}`
    }
    const { why, detail } = unanswered
    switch (why) {
      case 'closed':
        return `${toolName} failed: ${server} closed the connection during the call`
      case 'stream-ended':
        return `${toolName} failed: ${server} ended the stream that was to carry the answer without sending it`
      case 'accepted':
        return `${toolName} failed: ${server} answered the request with HTTP 202 (accepted, no answer to come), which the protocol does not allow`
      case 'not-resumed':
        return `${toolName} failed: ${server} did not resume the stream that was to carry the answer${detail ? ` (${detail})` : ''}`
      case 'malformed':
        return `${toolName} failed: ${server} answered with a message that is not valid JSON-RPC 2.0`
      case 'unresumable':
        return `${toolName} failed: ${server} ended the stream that was to carry the answer without it, naming an event id to resume it from that cannot be sent in an HTTP header`
      default: {
        const unknown: never = why
        throw new Error(`unknown reason ${String(unknown)}`)
      }
    }
  }

  /**
   * The transport closed without `close()`: the server exited or dropped the connection, or an
   * HTTP server was found gone (an answer cut off, a request refused).
   */
  #serverClosed(): void {
    if (this.#ended) return
    const loss = this.#link.loss()
    this.#end(loss ? lossError(this.name, loss) : this.#closedError())
    // Reap what is left (an HTTP session, a child that closed stdout but lives on).
    void this.#link.shutdown()
  }

  #closedError(): McpConnectionError {
    const { stdio } = this.#link
    const said = stdio?.stderrTail()
    const what = stdio ? (stdio.exited() ? 'exited' : 'closed its stdout') : 'closed the connection'
    return new McpConnectionError(
      'closed',
      this.name,
      `MCP server "${this.name}" ${what}${said ? `; its stderr ends: ${said}` : ''}`,
    )
  }

  #end(error: McpConnectionError | undefined): void {
    if (this.#ended) return
    this.#ended = { error: error && safeConnectionError(error, this.#secrets) }
    for (const listener of [...this.#closeListeners]) tell(listener, this.#ended.error)
    this.#closeListeners.clear()
  }
}

/** Calls an `onClose` listener: its bug must not keep the connection from closing. */
function tell(
  listener: (error: McpConnectionError | undefined) => void,
  error: McpConnectionError | undefined,
): void {
  try {
    listener(error)
  } catch {
    // Nothing to do with it.
  }
}

function describe(tool: ListedTool): { description?: string } {
  return tool.description === undefined ? {} : { description: tool.description }
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts. */
function untilSettledOrRejected<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

/** Waits for `promise` to settle, or for `signal` to abort, whichever comes first; never rejects. */
function untilSettledOrAborted(promise: Promise<unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done)
      resolve()
    }
    if (signal.aborted) return resolve()
    signal.addEventListener('abort', done, { once: true })
    promise.then(done, done)
  })
}

/**
 * ` (HTTP 503)` for a request answered with an HTTP error status, which the SDK's error keeps out of
 * its message; nothing for any other failure. Never a header: only the status.
 */
function statusOf(error: unknown): string {
  const status = httpStatusOf(error)
  return status === undefined ? '' : ` (${statusDetail(status)})`
}
