import type { AssistantMessage } from '@kode/protocol'

const PROVIDER_ERROR = Symbol.for('kode.ProviderError')

/**
 * Codes Kode itself assigns. Errors the provider reports keep the provider's own code
 * (`overloaded_error`, `rate_limit_exceeded`, ...), so `code` is an open string.
 */
export type TransportErrorCode =
  /** The connection failed or was reset. */
  | 'network'
  /** No bytes arrived for `idleTimeoutMs`. */
  | 'timeout'
  /** The stream ended before the provider's terminal event. */
  | 'stream_cut'
  /** A second response was spliced into the stream (an intermediary retried upstream). */
  | 'stream_spliced'
  /** The provider sent something that is not the wire format (bad JSON, not an event stream). */
  | 'invalid_response'
  /** The request could not be built (an image file without a reader, an unreadable file). */
  | 'invalid_request'
  /** The client configuration is unusable (an unknown `api`). */
  | 'invalid_config'

/** Fields of a {@link ProviderError}; all optional but `retryable`. */
export interface ProviderErrorInit {
  /** HTTP status, when the error came with one. */
  status?: number
  /** The provider's error code or type, or a {@link TransportErrorCode}. */
  code?: string
  /** Whether sending the same request again may succeed. */
  retryable: boolean
  /** The provider's own message, with any API key removed. */
  providerMessage?: string
  /** The provider's request id header, for support tickets. */
  requestId?: string
  /** How long the provider asked us to wait (`retry-after-ms` / `Retry-After`). */
  retryAfterMs?: number
  cause?: unknown
}

/**
 * Every failure of a provider call: HTTP errors, errors sent inside a 200 stream, network
 * failures, stalls and cut streams. `partial` holds what the response had produced before it
 * failed (`stopReason: 'error'`, tool calls that did not close marked `incomplete`). The message
 * and fields never contain the API key. Recognise one from any copy of this package with
 * {@link ProviderError.is}.
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError'
  readonly status?: number
  readonly code?: string
  readonly retryable: boolean
  readonly providerMessage?: string
  readonly requestId?: string
  readonly retryAfterMs?: number
  /** The response as far as it got; set when the error ends a stream. */
  partial?: AssistantMessage
  readonly [PROVIDER_ERROR] = true

  constructor(message: string, init: ProviderErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause })
    this.retryable = init.retryable
    if (init.status !== undefined) this.status = init.status
    if (init.code !== undefined) this.code = init.code
    if (init.providerMessage !== undefined) this.providerMessage = init.providerMessage
    if (init.requestId !== undefined) this.requestId = init.requestId
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs
  }

  /** True for a `ProviderError` from any copy of this package. */
  static is(value: unknown): value is ProviderError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[PROVIDER_ERROR] === true
    )
  }
}

/** Replaces every occurrence of `secret` in `text`; keys shorter than 8 characters are not secrets. */
export function redact(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 8 || !text.includes(secret)) return text
  return text.split(secret).join('[redacted]')
}
