import type { StreamItem } from '@kode/protocol'
import { Accumulator, type AccumulatorOptions } from '../accumulate.js'
import type { Completion, EventMapper, WireAdapter, WireRequest } from '../adapter/spec.js'
import type { LLMRequest, StreamOptions } from '../types.js'
import { looksLikePage } from './body.js'
import { ResponseDeadline } from './deadline.js'
import { excerpt, ProviderError, withRequestId } from './errors.js'
import {
  type ErrorContext,
  errorFromResponse,
  errorFromThrown,
  isEventStreamLike,
  notAStream,
  requestIdOf,
  transportError,
} from './failures.js'
import { requestHeaders } from './headers.js'
import { IdleWatchdog } from './idle-watchdog.js'
import { fetchFollowingRedirects } from './redirects.js'
import { type RetryPolicy, retryAllowed, retryDelayMs, sleep } from './retry.js'
import { SseDecoder, type SseEvent } from './sse.js'

/** Everything one response needs; built by the client per `stream()` call. */
export interface ResponseStreamSetup {
  adapter: WireAdapter
  /** The adapter's `completesOn`, resolved. */
  completesOn: Completion
  request: LLMRequest
  options: StreamOptions
  /** Base URL without a trailing slash. */
  baseUrl: string
  /** Host headers, applied over the adapter's. */
  headers: Record<string, string> | undefined
  fetch: typeof fetch
  dispatcher: unknown
  retry: RetryPolicy
  idleTimeoutMs: number
  /** Longest one attempt may take, request to last byte; 0 or `Infinity`: no limit. */
  responseTimeoutMs: number
  /** Follow redirects to another origin (see `ClientConfig.followCrossOriginRedirects`). */
  followCrossOriginRedirects: boolean
  errors: ErrorContext
  /** Stamps of the final message, minus the start time (taken when the stream starts). */
  message: Omit<AccumulatorOptions, 'startedAt'>
}

const DONE: IteratorResult<StreamItem> = Object.freeze({ done: true, value: undefined })

/** The `stream_cut` message for a stream that closed after its finish reason without the terminal event. */
const NO_TERMINAL_EVENT =
  'the stream ended after its finish reason without the terminal event this api requires ' +
  '(`data: [DONE]` on OpenAI-compatible servers). A server that never sends it fails this way ' +
  "every time, so the request was not retried: create the client with `completesOn: 'stop_reason'` " +
  'to accept a stream that ends after its finish reason.'

/**
 * One response as an async iterator: fetch, status check, SSE decoding, event mapping, retries
 * and abort, around one {@link Accumulator}. It is a hand-written iterator rather than an async
 * generator because items usually sit ready in the queue, and then `next()` is one resolved
 * promise instead of a generator round trip: this is the hot path of every token.
 *
 * Events are mapped one at a time as the caller pulls, so on abort the partial message holds
 * what the caller has seen (plus at most the rest of the event being read).
 */
export class ResponseStream implements AsyncIterableIterator<StreamItem> {
  private readonly setup: ResponseStreamSetup
  private readonly startedAt: number
  private acc: Accumulator
  private wire: WireRequest | undefined
  private body: string | undefined
  private headers: Record<string, string> | undefined
  private controller: AbortController | undefined
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  /** The request id of the current attempt's response, stamped on errors raised while reading it. */
  private requestId: string | undefined
  private decoder = new SseDecoder()
  private mapper: EventMapper | undefined
  private readonly watchdog: IdleWatchdog
  private idleFired = false
  private readonly deadline: ResponseDeadline
  /** The first bytes of the attempt's body were checked for an HTML page. */
  private sniffed = false
  private attempt = 0
  private delivered = false
  private finished = false
  private failure: ProviderError | undefined
  private inflight: Promise<IteratorResult<StreamItem>> | undefined
  private readonly onAbort = () => this.controller?.abort()

  constructor(setup: ResponseStreamSetup) {
    this.setup = setup
    this.startedAt = setup.message.now()
    this.acc = this.newAccumulator()
    this.deadline = new ResponseDeadline(setup.responseTimeoutMs)
    this.watchdog = new IdleWatchdog(setup.idleTimeoutMs, () => {
      this.idleFired = true
      this.controller?.abort()
    })
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<StreamItem>> {
    if (this.inflight) return this.inflight.then(() => this.next())
    let item: StreamItem | undefined
    try {
      // The fast path: an item already queued, or one mapped from an event already decoded.
      item = this.takeReady() ?? this.mapDecoded()
    } catch (thrown) {
      return this.track(this.pull({ error: thrown }))
    }
    if (item !== undefined) return Promise.resolve({ done: false, value: item })
    if (this.finished) return this.settled()
    return this.track(this.pull())
  }

  /** Called by `break` / `return` in a for-await loop: cancels the HTTP request. */
  return(): Promise<IteratorResult<StreamItem>> {
    if (!this.finished) this.close()
    return Promise.resolve(DONE)
  }

  /** An item ready to hand out, honouring an abort that happened since the last one. */
  private takeReady(): StreamItem | undefined {
    if (!this.finished && this.setup.options.signal?.aborted) this.endAborted()
    const item = this.acc.take()
    if (item !== undefined && item.type !== 'done') this.delivered = true
    return item
  }

  /** After the last item: the failure (once), then the end. */
  private settled(): Promise<IteratorResult<StreamItem>> {
    const failure = this.failure
    if (failure) {
      this.failure = undefined
      return Promise.reject(failure)
    }
    return Promise.resolve(DONE)
  }

  private track(pending: Promise<IteratorResult<StreamItem>>): Promise<IteratorResult<StreamItem>> {
    this.inflight = pending.finally(() => {
      this.inflight = undefined
    })
    return this.inflight
  }

  /** The slow path: connect, read, retry; starts with `failure` when the fast path threw. */
  private async pull(failure?: { error: unknown }): Promise<IteratorResult<StreamItem>> {
    for (;;) {
      if (!failure) {
        try {
          if (!this.reader) await this.connect()
          const item = await this.advance()
          if (item !== undefined) return { done: false, value: item }
          if (this.finished) return this.settled()
          continue
        } catch (thrown) {
          failure = { error: thrown }
        }
      }
      const retry = this.finished ? false : await this.recover(failure.error)
      failure = undefined
      if (retry) continue
      const item = this.takeReady()
      if (item !== undefined) return { done: false, value: item }
      return this.settled()
    }
  }

  /** Maps decoded events until one yields an item; `undefined` when they run out first. */
  private mapDecoded(): StreamItem | undefined {
    if (this.finished || !this.mapper) return undefined
    for (let event = this.decoder.next(); event !== undefined; event = this.decoder.next()) {
      this.map(event)
      const item = this.takeReady()
      if (item !== undefined) return item
    }
    return undefined
  }

  /** Maps queued events, reading more bytes when none are left, until an item is ready or the body ends. */
  private async advance(): Promise<StreamItem | undefined> {
    const reader = this.reader!
    for (;;) {
      const item = this.mapDecoded()
      if (item !== undefined) return item
      // Watched only while the read is pending: a consumer that pauses between items is not a stall.
      this.watchdog.resume()
      const chunk = await reader.read()
      this.watchdog.pause()
      if (chunk.done) return this.endOfBody()
      if (!this.sniffed) this.sniff(chunk.value)
      this.decoder.feed(chunk.value)
    }
  }

  /** Runs the adapter's mapping; a crash on an unexpected event shape is an `invalid_response`. */
  private map(event: SseEvent): void {
    try {
      this.mapper!(event, this.acc)
    } catch (thrown) {
      if (ProviderError.is(thrown)) throw thrown
      const { apiKey } = this.setup.errors
      const detail = `could not read an event (${messageOf(thrown)}): ${excerpt(event.data, 120, apiKey)}`
      throw transportError(this.setup.errors, 'invalid_response', detail, { retryable: false, cause: thrown })
    }
  }

  /** A 200 whose body is a web page is not a stream that was cut: `invalid_response`, not retried. */
  private sniff(bytes: Uint8Array): void {
    const page = looksLikePage(bytes)
    if (page === undefined) return
    this.sniffed = true
    if (!page) return
    const head = new TextDecoder().decode(bytes.subarray(0, 200)).trim()
    const detail = `expected an event stream, got a page: ${excerpt(head, 120, this.setup.errors.apiKey)}`
    throw transportError(this.setup.errors, 'invalid_response', detail, { retryable: false })
  }

  private endOfBody(): StreamItem | undefined {
    this.watchdog.stop()
    this.deadline.stop()
    if (!this.acc.isComplete(this.setup.completesOn)) {
      // A clean close right after the finish reason is almost always a server that never sends
      // the terminal event: every retry would fail the same way, so say how to accept it instead.
      if (this.acc.isComplete('stop_reason'))
        throw transportError(this.setup.errors, 'stream_cut', NO_TERMINAL_EVENT, { retryable: false })
      const detail = 'the stream ended before the response was complete'
      throw transportError(this.setup.errors, 'stream_cut', detail, { retryable: true })
    }
    if (this.acc.isEmpty()) {
      const detail = 'the response ended with no content and no stop reason'
      throw transportError(this.setup.errors, 'invalid_response', detail, { retryable: false })
    }
    this.acc.finish('complete')
    // The body was read to its end, so nothing is left to cancel: aborting anyway costs every
    // response a DOMException and undici's abort handling.
    this.controller = undefined
    this.end()
    return this.takeReady()
  }

  private async connect(): Promise<void> {
    const { setup } = this
    this.attempt++
    this.wire ??= await this.buildRequest()
    this.body ??= JSON.stringify(this.wire.body)
    this.headers ??= requestHeaders(this.wire.headers, setup.headers, setup.errors)
    const controller = new AbortController()
    this.controller = controller
    if (this.attempt === 1) setup.options.signal?.addEventListener('abort', this.onAbort)
    if (setup.options.signal?.aborted) controller.abort()
    this.idleFired = false
    this.sniffed = false
    this.watchdog.start()
    this.deadline.start(() => controller.abort())
    const init: RequestInit & { dispatcher?: unknown } = {
      method: 'POST',
      headers: this.headers,
      body: this.body,
      signal: controller.signal,
    }
    if (setup.dispatcher !== undefined) init.dispatcher = setup.dispatcher
    const response = await fetchFollowingRedirects(setup.baseUrl + this.wire.path, init, {
      fetch: setup.fetch,
      crossOrigin: setup.followCrossOriginRedirects,
      errors: setup.errors,
    })
    this.watchdog.touch()
    if (!response.ok) throw await errorFromResponse(response, setup.errors)
    this.requestId = requestIdOf(response.headers)
    if (!response.body || !isEventStreamLike(response)) throw await notAStream(response, setup.errors)
    this.reader = response.body.getReader()
    this.mapper = setup.adapter.createEventMapper(setup.request)
  }

  private async buildRequest(): Promise<WireRequest> {
    try {
      const wire = await this.setup.adapter.buildRequest(this.setup.request)
      return withProviderOptions(wire, this.setup.request.providerOptions?.[this.setup.message.api])
    } catch (thrown) {
      if (ProviderError.is(thrown)) throw thrown
      const detail = `could not build the request: ${messageOf(thrown)}`
      throw transportError(this.setup.errors, 'invalid_request', detail, { retryable: false, cause: thrown })
    }
  }

  /**
   * Decides what a failure means: an abort ends the stream with an `aborted` done; a retryable
   * error before any output was delivered retries (returns true); anything else ends the stream
   * with the error, after the items already queued.
   */
  private async recover(thrown: unknown): Promise<boolean> {
    const { setup } = this
    if (setup.options.signal?.aborted) {
      this.endAborted()
      return false
    }
    const error = withRequestId(this.errorOf(thrown), this.requestId)
    const retry = this.attempt
    const delayMs = retryDelayMs(retry, error.retryAfterMs, setup.retry)
    const elapsed = setup.message.now() - this.startedAt
    if (!this.delivered && error.retryable && retryAllowed(retry, elapsed, delayMs, setup.retry)) {
      this.resetAttempt()
      try {
        setup.options.onRetry?.({ attempt: retry, delayMs, error })
      } catch (callbackError) {
        // A throwing callback ends the stream with its own error rather than leaving it half reset.
        this.end()
        throw callbackError
      }
      try {
        await sleep(delayMs, setup.options.signal)
        return true
      } catch {
        this.endAborted()
        return false
      }
    }
    error.partial = this.acc.finish('error', error.message)
    this.failure = error
    this.end()
    return false
  }

  /** What a failure of this attempt means: a timeout of ours, or what was thrown. */
  private errorOf(thrown: unknown): ProviderError {
    const { setup } = this
    if (this.deadline.fired) {
      const detail = `the response took longer than responseTimeoutMs (${setup.responseTimeoutMs} ms)`
      return transportError(setup.errors, 'timeout', detail, { retryable: false, cause: thrown })
    }
    if (this.idleFired) {
      const stalled = `no data for ${setup.idleTimeoutMs} ms; the connection looks stalled`
      return transportError(setup.errors, 'timeout', stalled, { retryable: true, cause: thrown })
    }
    return errorFromThrown(thrown, setup.errors)
  }

  private endAborted(): void {
    this.acc.finish('aborted')
    this.end()
  }

  /** Consumer went away: cancel the request, emit nothing more. */
  private close(): void {
    this.end()
    this.acc = this.newAccumulator()
  }

  private end(): void {
    this.finished = true
    this.watchdog.stop()
    this.deadline.stop()
    this.controller?.abort()
    this.reader = undefined
    this.setup.options.signal?.removeEventListener('abort', this.onAbort)
  }

  private resetAttempt(): void {
    this.watchdog.stop()
    this.deadline.stop()
    this.controller?.abort()
    this.reader = undefined
    this.requestId = undefined
    this.mapper = undefined
    this.decoder = new SseDecoder()
    this.acc = this.newAccumulator()
  }

  private newAccumulator(): Accumulator {
    return new Accumulator({ ...this.setup.message, startedAt: this.startedAt })
  }
}

function messageOf(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown)
}

/** The request with the host's provider-specific fields over the adapter's (see `LLMRequest.providerOptions`). */
function withProviderOptions(
  wire: WireRequest,
  options: Readonly<Record<string, unknown>> | undefined,
): WireRequest {
  if (options === undefined) return wire
  if (typeof wire.body !== 'object' || wire.body === null || Array.isArray(wire.body)) return wire
  return { ...wire, body: { ...wire.body, ...options } }
}
