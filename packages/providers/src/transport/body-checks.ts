import type { Accumulator } from '../accumulate.js'
import type { Completion } from '../adapter/spec.js'
import { sniffBody } from './body.js'
import { excerpt, messageOf, ProviderError } from './errors.js'
import { type ErrorContext, secretsOf, transportError } from './failures.js'
import { MAX_EVENT_CHARS, type SseEvent } from './sse.js'

/** The `stream_cut` message for a stream that closed after its finish reason without the terminal event. */
const NO_TERMINAL_EVENT =
  'the stream ended after its finish reason without the terminal event this api requires ' +
  '(`data: [DONE]` on OpenAI-compatible servers). A server that never sends it fails this way ' +
  "every time, so the request was not retried: create the client with `completesOn: 'stop_reason'` " +
  'to accept a stream that ends after its finish reason.'

/**
 * Whether the first bytes of a 200's body are something other than an event stream (a web page, a
 * JSON document): `undefined` while too few bytes came to tell, `false` for a stream. Such a body
 * is not a stream that was cut: it is thrown as an `invalid_response` quoting it, never retried.
 */
export function checkNotStream(bytes: Uint8Array, errors: ErrorContext): boolean | undefined {
  const kind = sniffBody(bytes)
  if (!kind) return kind
  const head = new TextDecoder().decode(bytes.subarray(0, 200)).trim()
  const detail = `expected an event stream, got ${kind}: ${excerpt(head, 120, secretsOf(errors))}`
  throw transportError(errors, 'invalid_response', detail, { retryable: false })
}

/**
 * A server that streams one event, or one line, past {@link MAX_EVENT_CHARS}: a broken or hostile
 * server rather than a glitch, so it is not retried.
 */
export function eventTooLarge(errors: ErrorContext): ProviderError {
  const detail = `the stream sent an event longer than ${MAX_EVENT_CHARS} characters`
  return transportError(errors, 'invalid_response', detail, { retryable: false })
}

/**
 * What an adapter's mapping threw on `event`: a `ProviderError` as it is (an error the provider
 * sent), anything else (a crash on an unexpected event shape) an `invalid_response` quoting it.
 */
export function mappingError(thrown: unknown, event: SseEvent, errors: ErrorContext): unknown {
  if (ProviderError.is(thrown)) return thrown
  const detail = `could not read an event (${messageOf(thrown)}): ${excerpt(event.data, 120, secretsOf(errors))}`
  return transportError(errors, 'invalid_response', detail, { retryable: false, cause: thrown })
}

/**
 * Why a body that ended cleanly does not make a response, or `undefined` when it does: it ended
 * before the response was complete (cut, retryable; or right after the finish reason without the
 * wire's terminal event, which every retry would repeat), or it held nothing at all.
 */
export function endOfBodyError(
  acc: Accumulator,
  completesOn: Completion,
  errors: ErrorContext,
): ProviderError | undefined {
  if (!acc.isComplete(completesOn)) {
    // A clean close right after the finish reason is almost always a server that never sends
    // the terminal event: every retry would fail the same way, so say how to accept it instead.
    if (acc.isComplete('stop_reason'))
      return transportError(errors, 'stream_cut', NO_TERMINAL_EVENT, { retryable: false })
    const detail = 'the stream ended before the response was complete'
    return transportError(errors, 'stream_cut', detail, { retryable: true })
  }
  if (acc.isEmpty()) {
    const detail = 'the response ended with no content and no stop reason'
    return transportError(errors, 'invalid_response', detail, { retryable: false })
  }
  return undefined
}
