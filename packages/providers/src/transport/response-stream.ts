import type { StreamItem } from '@kode/protocol'
import { Accumulator } from '../accumulate.js'
import type { EventMapper } from '../adapter/spec.js'
import type { RetryInfo } from '../types.js'
import { attemptError } from './attempt-error.js'
import { checkNotStream, endOfBodyError, eventTooLarge, mappingError } from './body-checks.js'
import { ResponseDeadline } from './deadline.js'
import { type ProviderError, withRequestId } from './errors.js'
import { IdleWatchdog } from './idle-watchdog.js'
import {
  createMapper,
  headersUntilAborted,
  openResponse,
  type PreparedRequest,
  prepareRequest,
  type ResponseStreamSetup,
} from './open-response.js'
import { retryAllowed, retryDelayMs, sleep, untilAborted } from './retry.js'
import { isBlankEvent, SseDecoder } from './sse.js'

export type { ResponseStreamSetup } from './open-response.js'

const DONE: IteratorResult<StreamItem> = Object.freeze({ done: true, value: undefined })

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
  private prepared: PreparedRequest | undefined
  private controller: AbortController | undefined
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  /** The request id of the current attempt's response, stamped on errors raised while reading it. */
  private requestId: string | undefined
  private decoder = new SseDecoder()
  private mapper: EventMapper | undefined
  /**
   * A body is being read and nothing else is going on: no `next()` pending, no failure deferred,
   * not finished, not aborted. Then `next()` takes the fast path, which checks nothing else: every
   * change of those clears this flag (an abort through the signal's listener), and `settle`
   * recomputes it once a pending `next()` is over.
   */
  private hot = false
  private readonly watchdog: IdleWatchdog
  private idleFired = false
  private readonly deadline: ResponseDeadline
  /** The first bytes of the attempt's body were checked for an HTML page. */
  private sniffed = false
  private attempt = 0
  private delivered = false
  private finished = false
  /**
   * The consumer called `return()`: every `next()` from then on is the end, and nothing more is
   * handed out, whatever the end had left queued (items, a `done`, a failure to throw). Checked
   * off the hot path only: `return()` also ends the stream, so `hot` stays false after it.
   */
  private returned = false
  private failure: ProviderError | undefined
  private inflight: Promise<IteratorResult<StreamItem>> | undefined
  /** What `takeSync` caught, handled by the next `next()` as if that call had thrown it. */
  private deferred: { error: unknown } | undefined
  private readonly onAbort = () => {
    this.hot = false
    this.abortAttempt()
  }
  private readonly settle = () => {
    this.inflight = undefined
    this.hot =
      !this.finished &&
      this.deferred === undefined &&
      this.mapper !== undefined &&
      this.setup.options.signal?.aborted !== true
  }

  constructor(setup: ResponseStreamSetup) {
    this.setup = setup
    this.startedAt = setup.message.now()
    this.acc = this.newAccumulator()
    this.deadline = new ResponseDeadline(setup.responseTimeoutMs)
    this.watchdog = new IdleWatchdog(setup.idleTimeoutMs, () => {
      this.idleFired = true
      this.abortAttempt()
    })
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<StreamItem>> {
    if (this.hot) {
      // The hot path of every item: one already queued, or mapped from an event already decoded.
      let item: StreamItem | undefined
      try {
        item = this.readyItem()
      } catch (thrown) {
        return this.track(this.pull({ error: thrown }))
      }
      if (item !== undefined) {
        this.delivered = true
        return Promise.resolve({ done: false, value: item })
      }
      return this.track(this.pull())
    }
    return this.nextSlow()
  }

  /**
   * The next item if one is ready without waiting for the network: queued, or mapped from an
   * event already decoded. `undefined` otherwise, also while a `next()` is pending; a failure is
   * kept for the next `next()`, which handles it as its own. See `readBatches`.
   */
  takeSync(): StreamItem | undefined {
    if (this.inflight || this.deferred) return undefined
    try {
      if (!this.hot) return this.returned ? undefined : (this.takeReady() ?? this.readyItem())
      const item = this.readyItem()
      if (item !== undefined) this.delivered = true
      return item
    } catch (thrown) {
      this.hot = false
      this.deferred = { error: thrown }
      return undefined
    }
  }

  /**
   * Called by `break` / `return` in a for-await loop: cancels the HTTP request if it is still
   * open, and ends the stream for the consumer, also when it had already ended with items or a
   * failure still to hand out (an async iterator gives nothing more once returned).
   */
  return(): Promise<IteratorResult<StreamItem>> {
    if (this.returned) return Promise.resolve(DONE)
    this.returned = true
    if (!this.finished) this.end()
    // Dropped rather than kept unread: the consumer will not ask for them.
    this.acc = this.newAccumulator()
    this.failure = undefined
    this.deferred = undefined
    return Promise.resolve(DONE)
  }

  /** `next()` off the hot path: before the body, after a failure, at the end, around an abort. */
  private nextSlow(): Promise<IteratorResult<StreamItem>> {
    if (this.inflight) {
      // Queued behind the pending call whichever way it ends: a failure goes to that call alone,
      // and this one then gets what follows it (the end).
      const next = () => this.next()
      return this.inflight.then(next, next)
    }
    if (this.returned) return Promise.resolve(DONE)
    const deferred = this.deferred
    if (deferred) {
      this.deferred = undefined
      return this.track(this.pull(deferred))
    }
    let item: StreamItem | undefined
    try {
      item = this.takeReady() ?? this.readyItem()
    } catch (thrown) {
      return this.track(this.pull({ error: thrown }))
    }
    if (item !== undefined) return Promise.resolve({ done: false, value: item })
    if (this.finished) return this.settled()
    return this.track(this.pull())
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
    if (this.returned) return Promise.resolve(DONE)
    const failure = this.failure
    if (failure) {
      this.failure = undefined
      return Promise.reject(failure)
    }
    return Promise.resolve(DONE)
  }

  private track(pending: Promise<IteratorResult<StreamItem>>): Promise<IteratorResult<StreamItem>> {
    this.hot = false
    this.inflight = pending.finally(this.settle)
    return this.inflight
  }

  /** The slow path: connect, read, retry; starts with `failure` when the fast path threw. */
  private async pull(failure?: { error: unknown }): Promise<IteratorResult<StreamItem>> {
    for (;;) {
      if (!failure) {
        try {
          if (!this.reader) {
            await this.connect()
            // `return()` came while the request was being built or during a retry's wait.
            if (!this.reader) return this.settled()
          }
          const item = await this.advance()
          if (item !== undefined) return this.handOut(item)
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
      if (item !== undefined) return this.handOut(item)
      return this.settled()
    }
  }

  /**
   * What a pending `next()` resolves with: `item`, unless `return()` came while it waited (the
   * body ended, or an abort ended a retry's wait, in the meantime).
   */
  private handOut(item: StreamItem): IteratorResult<StreamItem> {
    return this.returned ? DONE : { done: false, value: item }
  }

  /**
   * The next item ready without waiting for the network: one queued, or mapped from the events
   * already decoded, one at a time until one yields an item; `undefined` when they run out first.
   * This runs for every item, so both queues are read in place (see `Fifo`). Nothing here can
   * abort the response: a signal fires only between the caller's calls. The slow paths take
   * queued items through `takeReady` first, which also honours an abort.
   */
  private readyItem(): StreamItem | undefined {
    const items = this.acc.items
    if (items.head < items.size) {
      const item = items.slots[items.head]!
      items.slots[items.head++] = undefined
      return item
    }
    items.head = items.size = 0
    const mapper = this.mapper
    if (this.finished || mapper === undefined) return undefined
    const acc = this.acc
    const events = this.decoder.events
    while (events.head < events.size) {
      const event = events.slots[events.head]!
      events.slots[events.head++] = undefined
      try {
        mapper(event, acc)
      } catch (thrown) {
        if (isBlankEvent(event)) continue
        throw mappingError(thrown, event, this.setup.errors)
      }
      if (items.head < items.size) {
        const item = items.slots[items.head]!
        items.slots[items.head++] = undefined
        this.delivered = true
        return item
      }
    }
    events.head = events.size = 0
    return undefined
  }

  /** Maps queued events, reading more bytes when none are left, until an item is ready or the body ends. */
  private async advance(): Promise<StreamItem | undefined> {
    const reader = this.reader!
    const signal = this.controller?.signal
    for (;;) {
      const item = this.readyItem()
      if (item !== undefined) return item
      // Checked once the events before it are handed out, so none of them is lost.
      if (this.decoder.tooLarge) throw eventTooLarge(this.setup.errors)
      // Watched only while the read is pending: a consumer that pauses between items is not a stall.
      this.watchdog.resume()
      const chunk = await reader.read()
      this.watchdog.pause()
      if (chunk.done) {
        // The attempt was aborted and its reader cancelled (see `abortAttempt`): not the body's end.
        if (signal?.aborted) throw signal.reason
        // The last event may end in a lone CR, complete only now: map it before the end.
        if (this.decoder.end()) continue
        return this.endOfBody()
      }
      if (!this.sniffed) this.sniffed = checkNotStream(chunk.value, this.setup.errors) !== undefined
      this.decoder.feed(chunk.value)
    }
  }

  private endOfBody(): StreamItem | undefined {
    this.watchdog.stop()
    this.deadline.stop()
    const error = endOfBodyError(this.acc, this.setup.completesOn, this.setup.errors)
    if (error) throw error
    this.acc.finish('complete')
    // The body was read to its end, so nothing is left to cancel: aborting anyway costs every
    // response a DOMException and undici's abort handling.
    this.controller = undefined
    this.reader = undefined
    this.end()
    return this.takeReady()
  }

  private async connect(): Promise<void> {
    const { setup } = this
    this.attempt++
    // Building may wait on the host (its readImageFile): an abort ends that wait, as it ends a fetch.
    this.prepared ??= await untilAborted(prepareRequest(setup), setup.options.signal)
    // The consumer left meanwhile: send nothing.
    if (this.finished) return
    const controller = new AbortController()
    this.controller = controller
    if (this.attempt === 1) setup.options.signal?.addEventListener('abort', this.onAbort)
    if (setup.options.signal?.aborted) controller.abort()
    this.idleFired = false
    this.sniffed = false
    // Made before the request is sent: an adapter that cannot make one has nothing to read it with.
    const mapper = createMapper(setup)
    this.watchdog.start()
    this.deadline.start(() => this.abortAttempt())
    const opened = await headersUntilAborted(controller.signal, (onHeaders) =>
      openResponse(setup, this.prepared!, controller.signal, () => {
        onHeaders()
        this.watchdog.touch()
      }),
    )
    this.requestId = opened.requestId
    this.reader = opened.reader
    this.mapper = mapper
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
    const fired = this.deadline.fired ? 'deadline' : this.idleFired ? 'idle' : undefined
    const error = withRequestId(attemptError(thrown, setup, fired), this.requestId)
    const retry = this.attempt
    const delayMs = retryDelayMs(retry, error.retryAfterMs, setup.retry)
    const elapsed = setup.message.now() - this.startedAt
    if (!this.delivered && error.retryable && retryAllowed(retry, elapsed, delayMs, setup.retry)) {
      const info: RetryInfo = { attempt: retry, delayMs, error }
      // What the provider billed for the attempt (its usage) goes to the caller before it is reset.
      if (this.acc.hasUsage()) info.partial = this.acc.finish('error', error.message)
      this.resetAttempt()
      try {
        setup.options.onRetry?.(info)
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

  private endAborted(): void {
    this.acc.finish('aborted')
    this.end()
  }

  private end(): void {
    this.hot = false
    this.finished = true
    this.watchdog.stop()
    this.deadline.stop()
    this.abortAttempt()
    this.reader = undefined
    this.setup.options.signal?.removeEventListener('abort', this.onAbort)
  }

  private resetAttempt(): void {
    this.hot = false
    this.watchdog.stop()
    this.deadline.stop()
    this.abortAttempt()
    this.reader = undefined
    this.requestId = undefined
    this.mapper = undefined
    this.decoder = new SseDecoder()
    this.acc = this.newAccumulator()
  }

  /**
   * Aborts the attempt's request and cancels its body. The abort alone ends a pending read where
   * `fetch` keeps the request's signal alive, but Deno holds it weakly: once nothing else refers to
   * the response, a garbage collection cuts the signal from the request, the abort does nothing,
   * and the read (with the connection) waits for ever. Cancelling the reader ends it anywhere; the
   * read then reports the end of the body, which `advance` tells from the real one.
   */
  private abortAttempt(): void {
    this.controller?.abort()
    this.reader?.cancel().catch(() => {})
  }

  private newAccumulator(): Accumulator {
    return new Accumulator({ ...this.setup.message, startedAt: this.startedAt })
  }
}
