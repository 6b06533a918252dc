import { isJSONRPCNotification, type RequestId } from '@modelcontextprotocol/sdk/types.js'
import { requestIdsOf } from './answer-guard.js'
import { canResumeFrom, eventIdWatch, headerValue } from './event-ids.js'
import { type ExpiringIds, expiringIds } from './expiring-ids.js'

/** A POST's event stream carrying answers, which can be let go. */
interface AnswerStream {
  readonly requests: readonly RequestId[]
  release(): void
}

/**
 * Wraps a streamable-HTTP transport's `fetch` so that the event stream a POST opened for a
 * request is let go (its connection closed) once that request is cancelled: a server never
 * answers a cancelled request, so the stream would stay open, holding a connection on both sides,
 * until the connection to the server is closed, one more for every cancelled call. Only once
 * `notifications/cancelled` went out, since the protocol says a broken stream is not a
 * cancellation (or, cancelled before the server answered the POST, as soon as it does); and only
 * a stream none of whose requests is `waiting` any more.
 *
 * The SDK, seeing the stream end, resumes it if it named an event (a GET with `Last-Event-ID`),
 * which a server would again keep open: that GET is answered here, with 405, on which the SDK
 * stops resuming without an error. The SDK may never send it (it does not resume a stream that
 * carried a result, which the cancelled request's may have just before it was let go), so the
 * record of it is kept for a while only (see `ReleaseOptions`).
 */
export function releaseCancelledStreams(
  fetchFn: typeof fetch,
  waiting: (ids: readonly RequestId[]) => RequestId[],
  options: ReleaseOptions = RELEASE_DEFAULTS,
): typeof fetch {
  const open = new Set<AnswerStream>()
  /** The event ids the streams let go end at: where the SDK would resume them from. */
  const released = expiringIds(options.keepMs, options.max)
  return async (input, init) => {
    const method = init?.method?.toUpperCase() ?? 'GET'
    if (method === 'GET' && released.size > 0) {
      const from = new Headers(init?.headers).get('last-event-id')
      if (from !== null && released.delete(from)) return new Response(null, { status: 405 })
    }
    if (method !== 'POST') return fetchFn(input, init)
    const cancelled = cancelledRequestOf(init?.body)
    if (cancelled !== undefined) {
      // Once the server heard of it, whatever it said.
      return fetchFn(input, init).finally(() => {
        for (const stream of open) {
          if (stream.requests.includes(cancelled) && waiting(stream.requests).length === 0) stream.release()
        }
      })
    }
    const response = await fetchFn(input, init)
    const requests = requestIdsOf(init?.body)
    const isEvents = response.headers.get('content-type')?.includes('text/event-stream') === true
    if (requests.length === 0 || !isEvents || response.body === null) return response
    const watched = releasable(response, requests, open, released)
    // Cancelled while the server had not yet answered the POST: nothing in the stream can be
    // read yet, so none of its requests was answered meanwhile.
    if (waiting(requests).length === 0) watched.stream.release()
    return watched.response
  }
}

/** How long the event id a stream let go ends at is kept for the SDK's attempt to resume it. */
export interface ReleaseOptions {
  /** Ms each id is kept at most. */
  readonly keepMs: number
  /** How many ids are kept at most; the oldest goes first. */
  readonly max: number
}

/**
 * The SDK tries to resume a stream after its first reconnection delay: 1 s, or the server's
 * `retry` hint if it sent one. Half a minute covers either but a server asking for longer, whose
 * stream is then reopened and held as if it had not been let go.
 */
const RELEASE_DEFAULTS: ReleaseOptions = { keepMs: 30_000, max: 100 }

/**
 * The same response, its body an event stream listed in `open` while it is read; released, it
 * ends there (what was read is still delivered) and its connection is closed.
 */
function releasable(
  response: Response,
  requests: readonly RequestId[],
  open: Set<AnswerStream>,
  released: ExpiringIds,
): { response: Response; stream: AnswerStream } {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const eventIds = eventIdWatch()
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined
  let over = false
  const stream: AnswerStream = {
    requests,
    release() {
      if (over) return
      over = true
      open.delete(stream)
      // An id no header can carry: the SDK's attempts to resume fail before any request.
      const from = eventIds.last()
      if (from !== undefined && canResumeFrom(from)) released.add(headerValue(from))
      controller?.close()
      void reader.cancel().catch(() => undefined)
    },
  }
  open.add(stream)
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c
    },
    async pull(c) {
      let chunk: ReadableStreamReadResult<Uint8Array>
      try {
        chunk = await reader.read()
      } catch (error) {
        if (over) return
        over = true
        open.delete(stream)
        c.error(error)
        return
      }
      if (over) return
      if (chunk.done) {
        over = true
        open.delete(stream)
        c.close()
        return
      }
      eventIds.feed(chunk.value)
      c.enqueue(chunk.value)
    },
    cancel(reason) {
      over = true
      open.delete(stream)
      return reader.cancel(reason)
    },
  })
  return {
    response: new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    }),
    stream,
  }
}

/** The request a `notifications/cancelled` body cancels; `undefined` for any other body. */
function cancelledRequestOf(body: unknown): RequestId | undefined {
  if (typeof body !== 'string') return undefined
  let message: unknown
  try {
    message = JSON.parse(body)
  } catch {
    return undefined
  }
  if (!isJSONRPCNotification(message) || message.method !== 'notifications/cancelled') return undefined
  const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId
  return typeof requestId === 'string' || typeof requestId === 'number' ? requestId : undefined
}
