import { McpConnectionError, messageOf } from './errors.js'

/**
 * Why a streamable-HTTP server is taken for gone: an exchange that carries requests and their
 * answers (a POST) failed below HTTP. `unreachable`: the POST got no response at all (connection
 * refused or reset, host gone). `cut`: its response stream broke before its end, so the answers
 * it was carrying will never come.
 */
export type ConnectionLoss = { readonly kind: 'unreachable' | 'cut'; readonly error: unknown }

/**
 * Wraps the `fetch` a streamable-HTTP transport uses so that `lose` hears of a lost POST. The SDK
 * reports such failures only through the transport's `onerror`, naming no request, and leaves the
 * requests waiting; it reports a broken GET stream (server notifications, which it reopens by
 * itself) the same way, and that one must not end anything: hence watching the exchanges
 * themselves. Failures after the transport was closed (its signal aborted) are not losses.
 */
export function watchPosts(fetchFn: typeof fetch, lose: (loss: ConnectionLoss) => void): typeof fetch {
  return async (input, init) => {
    const isPost = init?.method?.toUpperCase() === 'POST'
    const closed = () => init?.signal?.aborted === true
    let response: Response
    try {
      response = await fetchFn(input, init)
    } catch (error) {
      if (isPost && !closed()) lose({ kind: 'unreachable', error })
      throw error
    }
    if (!isPost || !response.ok || response.body === null) return response
    return withWatchedBody(response, (error) => {
      if (!closed()) lose({ kind: 'cut', error })
    })
  }
}

/** The same response, whose body calls `onBreak` if reading it fails. */
function withWatchedBody(response: Response, onBreak: (error: unknown) => void): Response {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  let cancelled = false
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>
      try {
        chunk = await reader.read()
      } catch (error) {
        onBreak(error)
        controller.error(error)
        return
      }
      // A reader that cancelled (the SDK done with a body) takes nothing more.
      if (cancelled) return
      if (chunk.done) controller.close()
      else controller.enqueue(chunk.value)
    },
    cancel: (reason) => {
      cancelled = true
      return reader.cancel(reason)
    },
  })
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}

/** The error that ends a connection after `loss`, for its calls' results and `onClose`. */
export function lossError(serverName: string, loss: ConnectionLoss): McpConnectionError {
  const server = `MCP server "${serverName}"`
  const detail = detailOf(loss.error)
  switch (loss.kind) {
    case 'unreachable':
      return new McpConnectionError('closed', serverName, `${server} could not be reached (${detail})`, {
        cause: loss.error,
      })
    case 'cut':
      return new McpConnectionError(
        'closed',
        serverName,
        `${server} dropped the connection during a request (${detail})`,
        { cause: loss.error },
      )
    default: {
      const unknown: never = loss.kind
      throw new Error(`unknown connection loss ${String(unknown)}`)
    }
  }
}

/** `fetch failed: connect ECONNREFUSED ...`: fetch's own messages say little without their cause's. */
function detailOf(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined
  return cause instanceof Error ? `${messageOf(error)}: ${messageOf(cause)}` : messageOf(error)
}
