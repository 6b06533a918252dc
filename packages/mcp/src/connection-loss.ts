import type { RequestId } from '@modelcontextprotocol/sdk/types.js'
import { type GivenUp, requestIdsOf } from './answer-guard.js'
import { McpConnectionError, messageOf } from './errors.js'
import { eventIdWatch } from './event-ids.js'
import { bodyCounter, eventCounter, type MessageCounter } from './message-size.js'

/**
 * Why a server is taken for gone. `unreachable`: an exchange that carries answers to requests (a
 * streamable-HTTP POST, the HTTP+SSE event stream) got no response at all (connection refused or
 * reset, host gone). `cut`: such a POST's response stream broke before its end, so the answers it
 * was carrying will never come. `dropped`: the HTTP+SSE event stream broke or ended: it carries
 * every answer, and one opened again is a new session the requests sent are unknown to.
 * `oversized`: the server sent a message larger than `maxMessageBytes` (or never ended one),
 * which is not read any further.
 */
export type ConnectionLoss =
  | { readonly kind: 'unreachable' | 'cut' | 'dropped'; readonly error: unknown }
  | { readonly kind: 'oversized'; readonly limit: number }

/** What `watchExchanges` watches for. */
export interface ExchangeWatch {
  /** Hears of a loss; called once per exchange at most. */
  lose: (loss: ConnectionLoss) => void
  /**
   * Hears of the requests a POST carried whose answers will never come though the server is
   * alive, so this is no loss (streamable HTTP only): its response ended, cleanly, without naming
   * an event to resume from (`stream-ended`), or it was a 202 Accepted (`accepted`), which the SDK
   * takes for "no answer to read". Whichever of them are still unanswered are given up on.
   */
  unanswered: (ids: readonly RequestId[], why: GivenUp) => void
  /** The largest message read (see `McpCommonOptions.maxMessageBytes`). */
  maxMessageBytes: number
  /**
   * Which exchanges carry answers, and so mean the server is gone when they fail below HTTP: a
   * streamable-HTTP transport's POSTs, or an HTTP+SSE transport's event stream (its GET).
   */
  answersOver: 'posts' | 'event-stream'
}

/**
 * Wraps the `fetch` an HTTP transport uses so that `watch.lose` hears of a lost exchange that
 * carries answers and of an oversized message. The SDK reports a failed POST only through the
 * transport's `onerror`, naming no request, and leaves the requests waiting; it reports a broken
 * GET stream (server notifications, which it reopens by itself) the same way, and that one must
 * not end anything: hence watching the exchanges themselves. Over HTTP+SSE it is the other way
 * round: the event stream carries the answers (the SDK's `EventSource` opens it again, to a new
 * session, and the requests wait), and a POST is only accepted. Failures after the transport was
 * closed (its signal aborted) are not losses.
 *
 * A POST's event stream that ends without the answers it was to carry leaves them waiting too,
 * unless it named an event (the SDK then resumes it), and so does a 202 answer to a POST carrying
 * requests: `watch.unanswered` hears of those.
 */
export function watchExchanges(fetchFn: typeof fetch, watch: ExchangeWatch): typeof fetch {
  return async (input, init) => {
    const method = init?.method?.toUpperCase() ?? 'GET'
    const carriesAnswers = method === (watch.answersOver === 'posts' ? 'POST' : 'GET')
    const requests = carriesAnswers ? requestIdsOf(init?.body) : []
    const closed = () => init?.signal?.aborted === true
    let response: Response
    try {
      response = await fetchFn(input, init)
    } catch (error) {
      if (carriesAnswers && !closed()) watch.lose({ kind: 'unreachable', error })
      throw error
    }
    // A request must get a JSON or event-stream answer; a 202 says none is coming (the SDK reads
    // nothing from it), and only a time limit would end the calls.
    if (watch.answersOver === 'posts' && response.status === 202 && requests.length > 0) {
      watch.unanswered(requests, 'accepted')
    }
    if (response.body === null) return response
    const limit = watch.maxMessageBytes
    const isEvents = response.headers.get('content-type')?.includes('text/event-stream') === true
    const eventIds = isEvents ? eventIdWatch() : undefined
    return withWatchedBody(response, {
      tooLarge: isEvents ? eventCounter(limit) : bodyCounter(limit),
      onTooLarge: () => watch.lose({ kind: 'oversized', limit }),
      onBreak: (error) => {
        if (!carriesAnswers || !response.ok || closed()) return
        watch.lose({ kind: watch.answersOver === 'posts' ? 'cut' : 'dropped', error })
      },
      onChunk: (chunk) => eventIds?.feed(chunk),
      onEnd: () => {
        if (!carriesAnswers || !response.ok || closed()) return
        if (watch.answersOver === 'event-stream') {
          watch.lose({ kind: 'dropped', error: new Error('the server ended it') })
        } else if (requests.length > 0 && eventIds?.seen() !== true)
          watch.unanswered(requests, 'stream-ended')
      },
    })
  }
}

interface BodyWatch {
  tooLarge: MessageCounter
  onTooLarge: () => void
  onBreak: (error: unknown) => void
  /** Each chunk, before it is passed on. */
  onChunk: (chunk: Uint8Array) => void
  /** The body was read to its end. */
  onEnd: () => void
}

/**
 * The same response, whose body calls `onBreak` if reading it fails, `onEnd` once read to its end,
 * and stops with an error (after calling `onTooLarge`) once a message in it grows too large.
 */
function withWatchedBody(response: Response, watch: BodyWatch): Response {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  let cancelled = false
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>
      try {
        chunk = await reader.read()
      } catch (error) {
        watch.onBreak(error)
        controller.error(error)
        return
      }
      // A reader that cancelled (the SDK done with a body) takes nothing more.
      if (cancelled) return
      if (chunk.done) {
        controller.close()
        watch.onEnd()
      } else if (watch.tooLarge(chunk.value)) {
        cancelled = true
        watch.onTooLarge()
        controller.error(new Error('the message is larger than maxMessageBytes'))
        void reader.cancel().catch(() => undefined)
      } else {
        watch.onChunk(chunk.value)
        controller.enqueue(chunk.value)
      }
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
  switch (loss.kind) {
    case 'oversized':
      return new McpConnectionError(
        'message_too_large',
        serverName,
        `${server} sent a message larger than ${loss.limit} bytes (maxMessageBytes); the connection was closed`,
      )
    case 'unreachable':
      return new McpConnectionError(
        'closed',
        serverName,
        `${server} could not be reached (${detailOf(loss.error)})`,
        {
          cause: loss.error,
        },
      )
    case 'dropped':
      return new McpConnectionError(
        'closed',
        serverName,
        `${server} dropped the event stream that carries its answers (${detailOf(loss.error)})`,
        { cause: loss.error },
      )
    case 'cut':
      return new McpConnectionError(
        'closed',
        serverName,
        `${server} dropped the connection during a request (${detailOf(loss.error)})`,
        { cause: loss.error },
      )
    default: {
      const unknown: never = loss
      throw new Error(`unknown connection loss ${JSON.stringify(unknown)}`)
    }
  }
}

/** `fetch failed: connect ECONNREFUSED ...`: fetch's own messages say little without their cause's. */
function detailOf(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined
  return cause instanceof Error ? `${messageOf(error)}: ${messageOf(cause)}` : messageOf(error)
}
