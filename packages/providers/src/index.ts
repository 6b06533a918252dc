/**
 * @kode/providers: one client per wire API over raw `fetch` and server-sent events, with
 * retries, typed errors and a model catalog.
 */
export { ProviderError, type ProviderErrorInit, redact, type TransportErrorCode } from './transport/errors.js'
export {
  type ErrorContext,
  type ErrorPayloadFields,
  errorFromPayload,
  errorFromResponse,
  errorFromThrown,
  parseEventJson,
  readErrorPayload,
  transportError,
} from './transport/failures.js'
export {
  isRetryableCode,
  isRetryableStatus,
  parseRetryAfter,
  type RetryOptions,
  type RetryPolicy,
  resolveRetryPolicy,
  retryAllowed,
  retryDelayMs,
} from './transport/retry.js'
export { SseDecoder, type SseEvent } from './transport/sse.js'
