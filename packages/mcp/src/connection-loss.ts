import type { RequestId } from '@modelcontextprotocol/sdk/types.js'
import { type GivenUp, requestIdsOf } from './answer-guard.js'
import { detailOf, McpConnectionError } from './errors.js'
import { canResumeFrom, eventIdWatch, headerValue } from './event-ids.js'
import { bodyCounter, eventCounter, type MessageCounter } from './message-size.js'
import { notificationStream } from './notification-stream.js'
import {
  type FailedOpening,
  type OpenOutcome,
  type StreamOpenings,
  statusDetail,
  streamOpenings,
} from './stream-opening.js'

/**
 * Why a server is taken for gone. `unreachable`: an exchange that carries answers to requests (a
 * streamable-HTTP POST, the HTTP+SSE event stream) got no response at all (connection refused or
 * reset, host gone). `cut`: such a POST's response stream broke before its end, so the answers it
 * was carrying will never come. `dropped`: the HTTP+SSE event stream broke or ended: it carries
 * every answer, and one opened again is a new session the requests sent are unknown to.
 * `oversized`: the server sent a message larger than `maxMessageBytes` (or never ended one),
 * which is not read any further. `deaf`: a streamable-HTTP server's own notification stream
 * is gone for good, so the connection would no longer hear of a changed tool list: it ended or
 * broke after an event id no header can carry (`unsendable-id`, see `canResumeFrom`), and the SDK
 * never opens it again; or the server answered the SDK's last attempt to reopen it with an error
 * status or a redirect the SDK does not follow (`refused`), and the SDK gave up. (Its last attempt
 * getting no response is `unreachable`.) `expired`: a streamable-HTTP server answered a POST in the
 * session with 404, which the protocol reserves for a session it no longer knows (it restarted, or
 * ended the session): every later request would get the same, and only a new session, that is a
 * new connection, goes on.
 */
export type ConnectionLoss =
  | { readonly kind: 'unreachable' | 'cut' | 'dropped'; readonly error: unknown }
  | { readonly kind: 'expired' }
  | { readonly kind: 'oversized'; readonly limit: number }
  | { readonly kind: 'deaf'; readonly why: 'unsendable-id' }
  | { readonly kind: 'deaf'; readonly why: 'refused'; readonly status: number }

/** What a transport is told to fail requests whose answers will never come though the server lives on. */
export interface AnswerWatch {
  /** Gives up on those of `ids` still waiting (see `AnswerGuard.giveUp`), once what came before is read. */
  unanswered: (ids: readonly RequestId[], why: GivenUp, detail?: string) => void
  /** Those of `ids` still waiting for an answer. */
  waiting: (ids: readonly RequestId[]) => RequestId[]
}

/** What `watchExchanges` watches for. */
export interface ExchangeWatch extends AnswerWatch {
  /** Hears of a loss; called once per exchange at most. */
  lose: (loss: ConnectionLoss) => void
  /** The largest message read (see `McpCommonOptions.maxMessageBytes`). */
  maxMessageBytes: number
  /**
   * Which exchanges carry answers, and so mean the server is gone when they fail below HTTP: a
   * streamable-HTTP transport's POSTs (and the GETs resuming their streams), or an HTTP+SSE
   * transport's event stream (its GET).
   */
  answersOver: 'posts' | 'event-stream'
  /**
   * How many times the SDK tries to resume an answer stream, or reopen the notification stream,
   * before giving up (its `reconnectionOptions.maxRetries`, streamable HTTP only).
   */
  resumeAttempts: number
}

/** An answer stream the SDK will resume: the requests still waiting for answers over it. */
interface Resumable {
  readonly requests: readonly RequestId[]
  /** Attempts to resume it that failed so far. */
  failures: number
  /** What each request of an attempt to resume it came to. */
  readonly openings: StreamOpenings
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
 * Streamable HTTP leaves requests waiting in three more ways, which `watch.unanswered` hears of:
 * a POST's event stream that ends without the answers it was to carry and names no event the
 * SDK resumes from (see `eventIdWatch`), or only one no header can carry (see `canResumeFrom`:
 * the SDK's attempts then fail before any request, unseen here); a 202 answer to a POST carrying requests; and a stream that named an event but
 * that the SDK, after its attempts to resume it (GETs with `Last-Event-ID`, watched as the POST
 * was), gave up on. A resumption that could not reach the server is a loss, as a POST's would be.
 * Both streams' attempts count as `OpenOutcome` says: a redirect the SDK follows is no attempt.
 * The HTTP+SSE event stream's opening follows the same rule: a redirect the SDK follows is not the
 * stream, the request it leads to is.
 *
 * The notification stream (any other GET over streamable HTTP) is the SDK's to reopen, from its
 * last event id: one no header can carry makes every attempt fail before any request, and the
 * stream is gone for good, silently. So is it once the SDK's attempts failed (see
 * `notificationStream`: a brief failure it recovers from is nothing). Either is a loss too
 * (`deaf`, or `unreachable` if the last attempt got no response), the one way Kode learns of it.
 */
export function watchExchanges(fetchFn: typeof fetch, watch: ExchangeWatch): typeof fetch {
  /** The answer streams the SDK will resume, by the event id it resumes from. */
  const resumable = new Map<string, Resumable>()
  const notificationsStream = notificationStream(watch.resumeAttempts)
  const notificationOpenings = streamOpenings()
  /** The HTTP+SSE event stream's opening: what of its GETs is a redirect the SDK follows. */
  const eventStreamOpenings = streamOpenings()
  /** The SDK gave up reopening the notification stream at `failure`, if it did: a loss. */
  const notificationsGone = (failure: FailedOpening | undefined) => {
    if (failure === undefined) return
    if (failure.kind === 'unreachable') watch.lose({ kind: 'unreachable', error: failure.error })
    else watch.lose({ kind: 'deaf', why: 'refused', status: failure.status })
  }
  /** An attempt to resume a stream came to `outcome`; once the SDK has given up (at once on a 405), so do we. */
  const resumeTried = (from: string, resumption: Resumable, outcome: OpenOutcome) => {
    // Given up on already, or resumed, by an earlier request.
    if (resumable.get(from) !== resumption) return
    switch (outcome.kind) {
      case 'redirected':
        return
      case 'opened':
        resumable.delete(from)
        return
      case 'not-offered':
        resumable.delete(from)
        watch.unanswered(resumption.requests, 'not-resumed', statusDetail(405))
        return
      case 'refused':
      case 'unreachable':
        if (++resumption.failures < watch.resumeAttempts) return
        resumable.delete(from)
        if (outcome.kind === 'unreachable') watch.lose({ kind: 'unreachable', error: outcome.error })
        else watch.unanswered(resumption.requests, 'not-resumed', statusDetail(outcome.status))
        return
      default: {
        const unknown: never = outcome
        throw new Error(`unknown outcome ${JSON.stringify(unknown)}`)
      }
    }
  }
  /** Once the answers read before the stream's end have settled their requests. */
  const expectResumption = (from: string, requests: readonly RequestId[]) =>
    setTimeout(() => {
      const left = watch.waiting(requests)
      if (left.length > 0) resumable.set(from, { requests: left, failures: 0, openings: streamOpenings() })
    }, 0)
  return async (input, init) => {
    const method = init?.method?.toUpperCase() ?? 'GET'
    const resumedFrom =
      method === 'GET' && watch.answersOver === 'posts' ? resumedFromOf(init, resumable) : undefined
    const resumption = resumedFrom === undefined ? undefined : resumable.get(resumedFrom)
    const carriesAnswers =
      resumption !== undefined || method === (watch.answersOver === 'posts' ? 'POST' : 'GET')
    const requests = resumption?.requests ?? (carriesAnswers ? requestIdsOf(init?.body) : [])
    const closed = () => init?.signal?.aborted === true
    const notifications = method === 'GET' && watch.answersOver === 'posts' && resumption === undefined
    const eventStream = method === 'GET' && watch.answersOver === 'event-stream'
    let response: Response
    try {
      response = await fetchFn(input, init)
    } catch (error) {
      if (resumedFrom !== undefined && resumption !== undefined && !closed()) {
        resumeTried(resumedFrom, resumption, resumption.openings.unreachable(error))
      } else if (carriesAnswers && !closed()) watch.lose({ kind: 'unreachable', error })
      else if (notifications && !closed()) {
        notificationsGone(notificationsStream.tried(notificationOpenings.unreachable(error)))
      }
      throw error
    }
    if (resumedFrom !== undefined && resumption !== undefined && !closed()) {
      resumeTried(resumedFrom, resumption, resumption.openings.answered(input, response))
    }
    if (notifications && !closed()) {
      notificationsGone(notificationsStream.tried(notificationOpenings.answered(input, response)))
    }
    // A redirect the SDK follows is not the stream: the request it leads to is (a refused one fails
    // the SDK's start, and the connection with it).
    if (eventStream && eventStreamOpenings.answered(input, response).kind === 'redirected') return response
    // The protocol's word for "no such session" (a GET's 404 is not: a server may route only POSTs).
    if (
      method === 'POST' &&
      watch.answersOver === 'posts' &&
      response.status === 404 &&
      new Headers(init?.headers).has('mcp-session-id') &&
      !closed()
    ) {
      watch.lose({ kind: 'expired' })
    }
    // A request must get a JSON or event-stream answer; a 202 says none is coming (the SDK reads
    // nothing from it), and only a time limit would end the calls.
    if (method === 'POST' && carriesAnswers && response.status === 202 && requests.length > 0) {
      watch.unanswered(requests, 'accepted')
    }
    if (response.body === null) return response
    const limit = watch.maxMessageBytes
    const isEvents = response.headers.get('content-type')?.includes('text/event-stream') === true
    const eventIds = isEvents ? eventIdWatch() : undefined
    /**
     * The notification stream is over: whether it can never be opened again (then a loss). If it
     * can, the SDK is about to try.
     */
    const notificationsOver = () => {
      if (!notifications || !response.ok || closed()) return false
      const from = eventIds?.last()
      if (from === undefined || canResumeFrom(from)) {
        notificationsStream.ended()
        return false
      }
      watch.lose({ kind: 'deaf', why: 'unsendable-id' })
      return true
    }
    return withWatchedBody(response, {
      tooLarge: isEvents ? eventCounter(limit) : bodyCounter(limit),
      onTooLarge: () => watch.lose({ kind: 'oversized', limit }),
      onBreak: (error) => {
        if (notificationsOver() || !carriesAnswers || !response.ok || closed()) return
        watch.lose({ kind: watch.answersOver === 'posts' ? 'cut' : 'dropped', error })
      },
      onChunk: (chunk) => eventIds?.feed(chunk),
      onEnd: () => {
        if (notificationsOver() || !carriesAnswers || !response.ok || closed()) return
        if (watch.answersOver === 'event-stream') {
          watch.lose({ kind: 'dropped', error: new Error('the server ended it') })
        } else if (requests.length > 0) {
          // The SDK resumes the stream only from an event id it read: without one, it is over.
          const from = eventIds?.last()
          if (from === undefined) watch.unanswered(requests, 'stream-ended')
          else if (!canResumeFrom(from)) watch.unanswered(requests, 'unresumable')
          else expectResumption(headerValue(from), requests)
        }
      },
    })
  }
}

/** The event id a GET resumes an answer stream we know of from, if it does. */
function resumedFromOf(init: RequestInit | undefined, resumable: Map<string, Resumable>): string | undefined {
  if (resumable.size === 0) return undefined
  const from = new Headers(init?.headers).get('last-event-id')
  return from !== null && resumable.has(from) ? from : undefined
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

/**
 * The error that ends a connection after `loss`, for its calls' results and `onClose` (or for
 * `connectMcpServer`, when the loss ended the connection before it was ready). A loss that has no
 * error of its own to give as `cause` gives `otherwise`, if any (what the interrupted step failed with).
 */
export function lossError(serverName: string, loss: ConnectionLoss, otherwise?: unknown): McpConnectionError {
  const server = `MCP server "${serverName}"`
  switch (loss.kind) {
    case 'oversized':
      return new McpConnectionError(
        'message_too_large',
        serverName,
        `${server} sent a message larger than ${loss.limit} bytes (maxMessageBytes); the connection was closed`,
        { cause: otherwise },
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
    case 'deaf':
      return new McpConnectionError(
        'closed',
        serverName,
        loss.why === 'refused'
          ? `${server} refused to reopen the stream that carries its notifications (a changed tool list, say), and the SDK gave up (${statusDetail(loss.status)}): no more can come, so the connection was closed`
          : `${server} ended the stream that carries its notifications (a changed tool list, say) naming an event id to resume it from that cannot be sent in an HTTP header: it can never be resumed, so the connection was closed`,
        { cause: otherwise },
      )
    case 'expired':
      return new McpConnectionError(
        'closed',
        serverName,
        `${server} no longer knows the session (HTTP 404 to a request naming it), as after a restart: the connection was closed`,
        { cause: otherwise },
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
