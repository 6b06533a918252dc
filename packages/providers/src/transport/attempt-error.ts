import { ProviderError } from './errors.js'
import { type ErrorContext, errorFromThrown, transportError } from './failures.js'

/** The transport's own limits of an attempt, as a client set them. */
export interface AttemptLimits {
  errors: ErrorContext
  responseTimeoutMs: number
  idleTimeoutMs: number
}

/**
 * What a failed attempt means: an HTTP error response as it is, else a timeout of the transport's
 * own (`fired`: the attempt's deadline, which is not retried, or the idle watchdog, a stall, which
 * is), else what was thrown, as the error it means.
 */
export function attemptError(
  thrown: unknown,
  limits: AttemptLimits,
  fired: 'deadline' | 'idle' | undefined,
): ProviderError {
  const { errors } = limits
  // An error response whose body stalled or outlasted the deadline: the status and whatever of
  // the provider's message arrived say more than the timeout that cut the quote short.
  if (ProviderError.is(thrown) && thrown.status !== undefined) return thrown
  if (fired === 'deadline') {
    const detail = `the response took longer than responseTimeoutMs (${limits.responseTimeoutMs} ms)`
    return transportError(errors, 'timeout', detail, { retryable: false, cause: thrown })
  }
  if (fired === 'idle') {
    const stalled = `no data for ${limits.idleTimeoutMs} ms; the connection looks stalled`
    return transportError(errors, 'timeout', stalled, { retryable: true, cause: thrown })
  }
  return errorFromThrown(thrown, errors)
}
