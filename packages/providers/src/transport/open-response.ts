import type { AccumulatorOptions } from '../accumulate.js'
import type { Completion, EventMapper, WireAdapter, WireRequest } from '../adapter/spec.js'
import type { LLMRequest, StreamOptions } from '../types.js'
import { messageOf, ProviderError, withRequestId } from './errors.js'
import {
  type ErrorContext,
  errorFromResponse,
  isEventStreamLike,
  notAStream,
  requestIdOf,
  transportError,
} from './failures.js'
import { bodyJson } from './json-text.js'
import { withProviderOptions, withProviderTools } from './provider-options.js'
import { fetchFollowingRedirects } from './redirects.js'
import { requestUrl } from './request-url.js'
import type { RetryPolicy } from './retry.js'

/** Everything one response needs; built by the client per `stream()` call, from what it made once. */
export interface ResponseStreamSetup {
  adapter: WireAdapter
  /** The adapter's `completesOn`, resolved. */
  completesOn: Completion
  request: LLMRequest
  options: StreamOptions
  /** Base URL without a trailing slash. */
  baseUrl: string
  /** The adapter's headers with the transport's and the host's, checked (see `clientHeaders`). */
  requestHeaders: (adapter: Record<string, string>) => Record<string, string>
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

/** The request of every attempt of one response, built once: retries send the same bytes. */
export interface PreparedRequest {
  url: string
  headers: Record<string, string>
  body: string
}

/** An attempt's response, checked: an event stream with a 2xx status. */
export interface OpenedResponse {
  reader: ReadableStreamDefaultReader<Uint8Array>
  /** The provider's id of the request, stamped on errors raised while reading it. */
  requestId: string | undefined
}

/** Builds the wire request (the adapter's, with the host's provider tools and options) and its JSON body. */
export async function prepareRequest(setup: ResponseStreamSetup): Promise<PreparedRequest> {
  // Everything here fails the same way on every attempt: an adapter's mistake is never sent,
  // and never taken for a network error to retry.
  try {
    let wire = checkedWire(await setup.adapter.buildRequest(setup.request))
    const api = setup.message.api
    wire = withProviderTools(wire, setup.request.providerTools?.[api])
    wire = withProviderOptions(wire, setup.request.providerOptions?.[api])
    return {
      url: checkedUrl(setup.baseUrl, wire.path),
      headers: setup.requestHeaders(wire.headers),
      body: bodyJson(wire.body),
    }
  } catch (thrown) {
    if (ProviderError.is(thrown)) throw thrown
    const detail = `could not build the request: ${messageOf(thrown)}`
    throw transportError(setup.errors, 'invalid_request', detail, { retryable: false, cause: thrown })
  }
}

/** What `buildRequest` returned, if it has the shape of a request (plain JS adapters have no types to say so). */
function checkedWire(wire: WireRequest): WireRequest {
  if (typeof wire !== 'object' || wire === null) throw new TypeError('buildRequest returned no request')
  if (typeof wire.path !== 'string') throw new TypeError('the request has no path')
  if (typeof wire.headers !== 'object' || wire.headers === null)
    throw new TypeError('the request has no headers object')
  return wire
}

/**
 * The request's URL. When the base URL is absolute, a path that makes no URL with it (`chat`
 * without its slash, joined to a port) is the adapter's mistake; fetch would call it a network
 * error. A relative base URL is left to the host's fetch to resolve.
 */
function checkedUrl(baseUrl: string, path: string): string {
  const url = requestUrl(baseUrl, path)
  if (URL.canParse(baseUrl) && !URL.canParse(url))
    throw new TypeError(`the path ${JSON.stringify(path)} makes no URL with the base URL`)
  return url
}

/**
 * The adapter's event mapper for one attempt. One it cannot make (its factory threw, or returned
 * something that is not a function) is an `invalid_request`, and nothing is sent: every attempt
 * would fail the same way, and without a mapper no event could be read.
 */
export function createMapper(setup: ResponseStreamSetup): EventMapper {
  let mapper: unknown
  try {
    mapper = setup.adapter.createEventMapper(setup.request)
  } catch (thrown) {
    if (ProviderError.is(thrown)) throw thrown
    const detail = `createEventMapper failed: ${messageOf(thrown)}`
    throw transportError(setup.errors, 'invalid_request', detail, { retryable: false, cause: thrown })
  }
  if (typeof mapper === 'function') return mapper as EventMapper
  const detail = `createEventMapper returned ${mapper === null ? 'null' : typeof mapper}, not a function`
  throw transportError(setup.errors, 'invalid_request', detail, { retryable: false })
}

/**
 * POSTs `request` (following redirects as configured) and checks the answer: a non-2xx status or
 * a body that is not an event stream is thrown as the error it means. `onHeaders` runs when the
 * response's headers arrive, and as each piece of an error body does (the idle watchdog counts
 * them as data).
 */
export async function openResponse(
  setup: ResponseStreamSetup,
  request: PreparedRequest,
  signal: AbortSignal,
  onHeaders: () => void,
): Promise<OpenedResponse> {
  const init: RequestInit & { dispatcher?: unknown } = {
    method: 'POST',
    headers: request.headers,
    body: request.body,
    signal,
  }
  if (setup.dispatcher !== undefined) init.dispatcher = setup.dispatcher
  const response = await fetchFollowingRedirects(request.url, init, {
    fetch: setup.fetch,
    crossOrigin: setup.followCrossOriginRedirects,
    errors: setup.errors,
  })
  onHeaders()
  // An error body that keeps arriving is not a stall: each piece counts as data, as headers do.
  if (!response.ok) throw await errorFromResponse(response, setup.errors, onHeaders)
  const requestId = requestIdOf(response.headers, setup.errors)
  if (!response.body || !isEventStreamLike(response))
    throw withRequestId(await notAStream(response, setup.errors), requestId)
  return { reader: response.body.getReader(), requestId }
}

/**
 * `open`'s response, or the abort of `signal` while its headers are awaited. A fetch that no
 * longer follows the signal (Deno's, once a collection cut it from the request) would wait for the
 * headers through a timeout or an abort, then read a stalled body for ever: the wait ends at the
 * abort, and a response that arrives after it is cancelled, closing its connection. Once headers
 * arrived, `open` itself handles an abort (an error body read so far is still that error).
 */
export function headersUntilAborted(
  signal: AbortSignal,
  open: (onHeaders: () => void) => Promise<OpenedResponse>,
): Promise<OpenedResponse> {
  let answered = false
  let abandoned = false
  return new Promise<OpenedResponse>((resolve, reject) => {
    const onAbort = () => {
      if (answered) return
      abandoned = true
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    open(() => {
      answered = true
    })
      .then(
        (opened) => {
          if (abandoned) opened.reader.cancel().catch(() => {})
          else resolve(opened)
        },
        (error: unknown) => {
          if (!abandoned) reject(error)
        },
      )
      .finally(() => signal.removeEventListener('abort', onAbort))
  })
}
