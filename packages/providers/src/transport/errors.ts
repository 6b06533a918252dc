import type { AssistantMessage } from '@kode/protocol'
import { cutText, redactUrlSecrets } from '@kode/protocol/helpers'
import { secretPattern } from './secret-pattern.js'

const PROVIDER_ERROR = Symbol.for('kode.ProviderError')

/**
 * Codes Kode itself assigns. Errors the provider reports keep the provider's own code
 * (`overloaded_error`, `rate_limit_exceeded`, ...), so `code` is an open string.
 */
export type TransportErrorCode =
  /** The connection failed or was reset. */
  | 'network'
  /** No bytes arrived for `idleTimeoutMs`, or the response outlasted `responseTimeoutMs`. */
  | 'timeout'
  /** The stream ended before the provider's terminal event. */
  | 'stream_cut'
  /** A second response was spliced into the stream (an intermediary retried upstream). */
  | 'stream_spliced'
  /** The provider sent something that is not the wire format (bad JSON, not an event stream). */
  | 'invalid_response'
  /**
   * The server redirected to another origin (or a browser hid where to): not followed, so the key
   * and prompt stay where the host sent them. See `ClientConfig.followCrossOriginRedirects`. Also
   * a redirect that cannot be followed: more than 5 in a row, or one without a `Location`.
   */
  | 'redirect'
  /** The request could not be built (an image file without a reader, an unreadable file). */
  | 'invalid_request'
  /** The client configuration is unusable (an unknown `api`). */
  | 'invalid_config'

/**
 * What a provider error means, where the engine acts on it. `context_overflow`: the request is
 * larger than the model's context window (each api's wording is recognised); sending it again
 * fails the same way, a shorter one may succeed.
 */
export type ProviderErrorKind = 'context_overflow'

/** Fields of a {@link ProviderError}; all optional but `retryable`. */
export interface ProviderErrorInit {
  /** HTTP status, when the error came with one. */
  status?: number
  /** The provider's error code or type, or a {@link TransportErrorCode}. */
  code?: string
  /** Whether sending the same request again may succeed. */
  retryable: boolean
  /** What the error means, when the transport recognised it. */
  kind?: ProviderErrorKind
  /** The provider's own message, with any API key removed. */
  providerMessage?: string
  /**
   * The provider's request id header, for support tickets; also set on failures inside a 200
   * stream (in-stream errors, cuts, stalls), from the headers of that response.
   */
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
  /** What the error means, when recognised (see {@link ProviderErrorKind}). */
  readonly kind?: ProviderErrorKind
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
    if (init.kind !== undefined) this.kind = init.kind
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

/**
 * Stamps the request id of the response an error happened in (a failure inside a 200 stream),
 * unless the error already has one.
 */
export function withRequestId(error: ProviderError, requestId: string | undefined): ProviderError {
  if (requestId !== undefined && error.requestId === undefined)
    (error as { requestId?: string }).requestId = requestId
  return error
}

/**
 * `text` safe to keep in an error: every occurrence of `secret` (each of them, given several; and of it trimmed: HTTP
 * trims header values, so errors quote a key without its surrounding whitespace) becomes
 * `[redacted]` in any spelling a server may echo it in (raw, percent- or form-encoded,
 * JSON-escaped: see {@link secretPattern}), and so do the credentials of any URL in it
 * (`https://user:pass@host` -> `https://[redacted]@host`) and the values of key-bearing query
 * parameters (see {@link redactUrlSecrets}). Keys shorter than 8
 * characters are not secrets.
 */
export function redact(text: string, secret: Secrets): string {
  let out = redactUrlSecrets(text)
  for (const one of typeof secret === 'string' ? [secret] : (secret ?? [])) {
    if (one.length < 8) continue
    out = out.replace(secretPattern(one), '[redacted]')
    const trimmed = one.trim()
    if (trimmed !== one && trimmed.length >= 8) out = out.replace(secretPattern(trimmed), '[redacted]')
  }
  return out
}

/** What {@link redact} removes: the API key, or every credential a request carries. */
export type Secrets = string | readonly string[] | undefined

/**
 * How an error quotes a URL: origin and path only. The origin has no `user:password@`, and the
 * query and fragment (where a key or a one-time token may ride) are left out. A URL with no host
 * (`mailto:`, `data:`) is quoted as scheme and path.
 */
export function originAndPath(url: URL): string {
  return url.host ? `${url.protocol}//${url.host}${url.pathname}` : `${url.protocol}${url.pathname}`
}

/**
 * At most `max` characters of `text`, with `secret` removed first: cutting first could split the
 * key and leave a prefix of it that `redact` no longer recognises.
 */
export function excerpt(text: string, max: number, secret: Secrets): string {
  const clean = redact(text, secret)
  return clean.length > max ? cutText(clean, max + 1) : clean
}

/**
 * `value` safe to keep as an error's `cause`: an error whose message, stack, own properties,
 * causes or aggregated errors (an `AggregateError`'s `errors`) quote `secret` or a URL secret (see
 * {@link redact}) is replaced by a {@link RedactedError} copy (console.error prints the cause chain,
 * the aggregated errors and each error's properties); a string is redacted; anything else is
 * returned as it is.
 */
export function redactCause(value: unknown, secret: Secrets): unknown {
  return safeCause(value, { secret, copiesLeft: MAX_ERRORS_COPIED }, 0)
}

// Cause chains are short; a deeper (or cyclic) one is cut rather than walked forever.
const MAX_CAUSE_DEPTH = 8
// An AggregateError holds a few errors (one per address a connect tried). A longer list, a tree
// of aggregates or one that holds itself is checked and copied up to these bounds, then cut.
const MAX_AGGREGATED_ERRORS = 16
const MAX_ERRORS_CHECKED = 64
const MAX_ERRORS_COPIED = 32

/** One `redactCause` call: the secrets, and how many more errors it may copy. */
interface Walk {
  readonly secret: Secrets
  copiesLeft: number
}

function safeCause(value: unknown, walk: Walk, depth: number): unknown {
  if (typeof value === 'string') return redact(value, walk.secret)
  if (typeof value === 'object' && value !== null && !(value instanceof Error))
    return objectQuotes(value, walk.secret) ? safeCause(standIn(value), walk, depth) : value
  if (!(value instanceof Error)) return value
  if (depth >= MAX_CAUSE_DEPTH) return undefined
  if (!quotes(value, walk.secret, depth, { left: MAX_ERRORS_CHECKED })) return value
  if (walk.copiesLeft <= 0) return undefined
  walk.copiesLeft--
  return new RedactedError(value, walk, depth)
}

/**
 * Whether a thrown value that is not an `Error` (a fetch wrapper's plain object, one without a
 * prototype) quotes `secret` in its message or its own properties; one that cannot be written out
 * counts as quoting.
 */
function objectQuotes(value: object, secret: Secrets): boolean {
  const message = messageOf(value)
  if (redact(message, secret) !== message) return true
  let properties: string | undefined
  try {
    properties = propertiesText(Object.entries(value))
  } catch {
    // A getter that throws: what it hides cannot be checked.
    return true
  }
  return properties === undefined || redact(properties, secret) !== properties
}

/**
 * An `Error` standing for a thrown object, to be copied without the secret: its `name`, `message`,
 * `code` and `cause` when it has them, and no stack (it was not thrown from here).
 */
function standIn(value: object): Error {
  const name = readOr(value, 'name')
  const code = readOr(value, 'code')
  const cause = readOr(value, 'cause')
  const error = new Error(messageOf(value), cause === undefined ? undefined : { cause })
  error.name = typeof name === 'string' ? name : 'Error'
  if (code !== undefined) Object.assign(error, { code })
  error.stack = `${error.name}: ${error.message}`
  return error
}

/** `value[key]`, or undefined when reading it throws (a getter, a revoked proxy). */
function readOr(value: object, key: string): unknown {
  try {
    return Reflect.get(value, key)
  } catch {
    return undefined
  }
}

/** The errors an `AggregateError` (or an error shaped like one) holds; undefined for others. */
function aggregatedErrors(error: Error): readonly unknown[] | undefined {
  const errors = (error as { errors?: unknown }).errors
  return Array.isArray(errors) ? errors : undefined
}

/**
 * Whether `error`, one of its causes or one of its aggregated errors mentions `secret` in its
 * message, stack, code or other own properties (an HTTP library's error may keep the request,
 * headers and all, which `console.error` and `JSON.stringify` show). What is too deep or too much
 * to check counts as quoting: it is copied, and cut, to be safe.
 */
function quotes(error: Error, secret: Secrets, depth: number, budget: { left: number }): boolean {
  if (depth >= MAX_CAUSE_DEPTH || budget.left <= 0) return true
  budget.left--
  const code = (error as { code?: unknown }).code
  const texts = [error.message, error.stack, typeof code === 'string' ? code : undefined]
  const properties = ownPropertiesText(error)
  // Properties that cannot be written out (a cycle) cannot be checked: copied to be safe.
  if (properties === undefined) return true
  for (const text of [...texts, properties]) {
    if (text !== undefined && redact(text, secret) !== text) return true
  }
  const errors = aggregatedErrors(error) ?? []
  if (errors.length > MAX_AGGREGATED_ERRORS) return true
  return [error.cause, ...errors].some((inner) =>
    inner instanceof Error
      ? quotes(inner, secret, depth + 1, budget)
      : typeof inner === 'object' && inner !== null
        ? objectQuotes(inner, secret)
        : typeof inner === 'string' && redact(inner, secret) !== inner,
  )
}

/**
 * The own enumerable properties of `error` but its message, stack and cause, as JSON, with
 * `Headers` (and a `Request`'s headers) written out as `util.inspect` shows them; undefined when
 * they cannot be written out.
 */
function ownPropertiesText(error: Error): string | undefined {
  return propertiesText(
    Object.entries(error).filter(([name]) => !['message', 'stack', 'cause'].includes(name)),
  )
}

/** `own` as JSON, as {@link ownPropertiesText} writes it; undefined when it cannot be written out. */
function propertiesText(own: [string, unknown][]): string | undefined {
  if (own.length === 0) return ''
  try {
    return JSON.stringify(Object.fromEntries(own), (_name, value: unknown) => {
      if (typeof value === 'bigint') return String(value)
      if (typeof Headers !== 'undefined' && value instanceof Headers) return Object.fromEntries(value)
      if (typeof Request !== 'undefined' && value instanceof Request)
        return { url: value.url, headers: Object.fromEntries(value.headers) }
      return value
    })
  } catch {
    return undefined
  }
}

/**
 * A copy of an error that quoted the API key: the same `name` and `code`, its message and stack
 * with the key replaced by `[redacted]`, its causes and aggregated errors made safe the same way
 * (those past the bounds of one `redactCause` call are left out). Its other properties (where a
 * request and its headers may be kept) are left out.
 */
export class RedactedError extends Error {
  readonly code?: unknown
  /** The original's aggregated errors made safe; not enumerable, as an `AggregateError`'s are. */
  declare readonly errors?: readonly unknown[]

  constructor(original: Error, walk: Walk, depth: number) {
    const { secret } = walk
    const cause = safeCause(original.cause, walk, depth + 1)
    super(redact(original.message, secret), cause === undefined ? undefined : { cause })
    this.name = original.name
    const code = (original as { code?: unknown }).code
    if (code !== undefined) this.code = typeof code === 'string' ? redact(code, secret) : code
    this.stack = original.stack === undefined ? undefined : redact(original.stack, secret)
    const errors = aggregatedErrors(original)
    if (errors === undefined) return
    const safe = errors
      .slice(0, MAX_AGGREGATED_ERRORS)
      .map((inner) => safeCause(inner, walk, depth + 1))
      .filter((inner) => inner !== undefined)
    Object.defineProperty(this, 'errors', { value: safe, writable: true, configurable: true })
  }
}

/**
 * What was thrown, as text for an error message: an error's message, a thrown object's `message`,
 * else the value as a string. Never throws itself (an object without a prototype has no `toString`).
 */
export function messageOf(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message
  const message = typeof thrown === 'object' && thrown !== null ? readOr(thrown, 'message') : undefined
  if (typeof message === 'string') return message
  try {
    return String(thrown)
  } catch {
    return Object.prototype.toString.call(thrown)
  }
}
