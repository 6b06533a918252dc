import { type BodyHead, MAX_QUOTED_BODY_BYTES, readBodyHead } from './body.js'
import {
  excerpt,
  messageOf,
  originAndPath,
  ProviderError,
  type ProviderErrorInit,
  redact,
  redactCause,
  type Secrets,
} from './errors.js'
import { isContextOverflow } from './overflow.js'
import { isRetryableCode, isRetryableResponse, isRetryableStatus, parseRetryAfter } from './retry.js'
import { retryInfoDelayMs } from './retry-info.js'

/** What error messages need to know: who answered, and which secret must never appear. */
export interface ErrorContext {
  /** The provider label errors are prefixed with (`openai-chat`, `anthropic`, a host label). */
  label: string
  /** Removed from every provider message before it is kept. */
  apiKey?: string | undefined
  /**
   * Other credentials the request carries (those of the host's `headers`, see
   * `headerCredentials`), removed the same way.
   */
  secrets?: readonly string[] | undefined
  /** Clock for HTTP-date `Retry-After` values. */
  now?: () => number
}

/** Every secret `ctx`'s errors must not contain: the API key and the other credentials. */
export function secretsOf(ctx: ErrorContext): readonly string[] {
  return ctx.apiKey === undefined ? (ctx.secrets ?? []) : [ctx.apiKey, ...(ctx.secrets ?? [])]
}

/** The parts of a provider error body every wire agrees on, more or less. */
export interface ErrorPayloadFields {
  message?: string
  code?: string
  /** A numeric code some providers put in the body (OpenRouter, Google). */
  status?: number
  /** The delay the body asks for before a retry (Google's `RetryInfo`), in milliseconds. */
  retryAfterMs?: number
}

/**
 * Reads the common error body shapes: `{ error: { message, type, code } }` (OpenAI and
 * compatibles), `{ type: 'error', error: { type, message } }` (Anthropic), `{ error: { code: 429,
 * status: 'RESOURCE_EXHAUSTED', message, details } }` (Google, whose `RetryInfo` detail gives the
 * delay to wait), `{ message }` / `{ detail }` (others). A list holding such a body (Vertex AI's
 * streaming endpoint answers `[{ error }]`) is read as its first entry.
 */
export function readErrorPayload(payload: unknown): ErrorPayloadFields {
  if (Array.isArray(payload) && isObject(payload[0])) payload = payload[0]
  if (typeof payload === 'string') return { message: payload }
  if (!isObject(payload)) return {}
  const inner = payload.error
  if (typeof inner === 'string') return { message: inner, ...codeOf(payload) }
  const body = isObject(inner) ? inner : payload
  const message = firstString(body.message, payload.message, body.detail, payload.detail)
  const retryAfterMs = retryInfoDelayMs(body)
  return {
    ...(message !== undefined ? { message } : {}),
    ...codeOf(body),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  }
}

function codeOf(body: Record<string, unknown>): ErrorPayloadFields {
  const code = firstString(body.code, body.type, body.status)
  const status = typeof body.code === 'number' ? body.code : undefined
  return { ...(code !== undefined ? { code } : {}), ...(status !== undefined ? { status } : {}) }
}

/**
 * The error for a non-2xx response: the provider's message and code from the body, the request
 * id, `Retry-After`, and whether to retry (`x-should-retry` from the provider wins over the status
 * and code).
 */
export async function errorFromResponse(
  response: Response,
  ctx: ErrorContext,
  onBytes?: () => void,
): Promise<ProviderError> {
  const { text, truncated, broken } = await readQuotedBody(response, secretsOf(ctx), onBytes)
  // A cut body is no JSON and not the provider's message as a whole: quoted, marked as cut.
  const payload = parseJsonOr(text)
  const cut = truncated || broken === true
  const fields = cut && typeof payload === 'string' ? {} : readErrorPayload(payload)
  const quoted = fields.message ?? (cut ? `${text.trim()}… (${cutNote(truncated)})` : text.trim())
  const providerMessage = redact(quoted || response.statusText, secretsOf(ctx))
  const shouldRetry = response.headers.get('x-should-retry')
  const retryable =
    shouldRetry === 'true'
      ? true
      : shouldRetry === 'false'
        ? false
        : isRetryableResponse(response.status, fields.code)
  const requestId = requestIdOf(response.headers, ctx)
  const hint = hintFor(response, ctx)
  const code = fields.code !== undefined ? ` ${fields.code}` : ''
  const where = requestId ? ` [request ${requestId}]` : ''
  const said = hint === '' ? providerMessage : endSentence(providerMessage)
  return new ProviderError(`${ctx.label} responded ${response.status}${code}: ${said}${hint}${where}`, {
    status: response.status,
    retryable,
    ...(isContextOverflow(response.status, fields) ? { kind: 'context_overflow' as const } : {}),
    providerMessage,
    ...(fields.code !== undefined ? { code: fields.code } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
    // A header wins; Google says it only in the body.
    ...optionalRetryAfter(parseRetryAfter(response.headers, (ctx.now ?? Date.now)()) ?? fields.retryAfterMs),
  })
}

/** Why a quoted body ends where it does: the reading limit, or the body broke off (cut, stalled). */
function cutNote(truncated: boolean): string {
  return truncated ? `cut at ${MAX_QUOTED_BODY_BYTES} bytes` : 'the rest did not arrive'
}

/** What to check after the most common mistakes, as a sentence of its own; '' for other statuses. */
function hintFor(response: Response, ctx: ErrorContext): string {
  if (response.status === 401 || response.status === 403) return authHint(ctx)
  if (response.status === 404) return notFoundHint(response, ctx)
  return ''
}

/** What to check after a 401 or 403: the key that was sent, or that none was. */
function authHint(ctx: ErrorContext): string {
  if ((ctx.secrets?.length ?? 0) > 0 || ctx.apiKey) return ' Check the API key.'
  // An empty key is usually an environment variable set to nothing; say so rather than "none".
  return ctx.apiKey === ''
    ? ' The apiKey given to createClient is empty.'
    : ' No API key was sent: pass apiKey to createClient.'
}

/**
 * What to check after a 404: a model id the provider does not know, or a `baseUrl` that is not
 * the API's root (`https://api.anthropic.com` without its `/v1`). The URL is quoted as origin and
 * path, so a query that carries a key is left out, and the path shows a missing or doubled root.
 */
function notFoundHint(response: Response, ctx: ErrorContext): string {
  const url = URL.canParse(response.url) ? new URL(response.url) : undefined
  if (url === undefined) return ' Check the model id and baseUrl.'
  return ` Check the model id and baseUrl: the request went to ${redact(originAndPath(url), secretsOf(ctx))}.`
}

/** `text` ending as a sentence, so that a hint after it reads as one of its own. */
function endSentence(text: string): string {
  const trimmed = text.trimEnd()
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`
}

/**
 * The error for an error the provider sent *inside* a successful stream (Anthropic's `error`
 * event, an OpenAI error chunk). Adapters throw it from their event mapping.
 */
export function errorFromPayload(payload: unknown, ctx: ErrorContext): ProviderError {
  const fields = readErrorPayload(payload)
  const providerMessage = redact(fields.message ?? 'unknown error', secretsOf(ctx))
  const retryable =
    isRetryableCode(fields.code) || (fields.status !== undefined && isRetryableStatus(fields.status))
  // The code is the server's text too (an HTTP error body is redacted whole before it is read).
  const safeCode = fields.code === undefined ? undefined : redact(fields.code, secretsOf(ctx))
  const code = safeCode !== undefined ? ` ${safeCode}` : ''
  return new ProviderError(`${ctx.label} reported an error in the stream${code}: ${providerMessage}`, {
    retryable,
    ...(isContextOverflow(fields.status, fields) ? { kind: 'context_overflow' as const } : {}),
    providerMessage,
    ...(safeCode !== undefined ? { code: safeCode } : {}),
    ...(fields.status !== undefined ? { status: fields.status } : {}),
  })
}

/**
 * Wraps whatever a `fetch` or a body read threw: a `ProviderError` stays as it is. The cause is
 * kept, copied without the API key if it quotes it.
 */
export function errorFromThrown(thrown: unknown, ctx: ErrorContext): ProviderError {
  if (ProviderError.is(thrown)) return thrown
  const detail = redact(describeThrown(thrown), secretsOf(ctx))
  return new ProviderError(`${ctx.label}: network error: ${detail}`, {
    code: 'network',
    retryable: true,
    cause: redactCause(thrown, secretsOf(ctx)),
  })
}

/**
 * A transport-level failure with one of Kode's own codes; `status` when a response's status is
 * what failed (a redirect that cannot be followed). `detail` and `cause` are kept without the API
 * key; quote long text with `excerpt` so the key is removed before the text is cut.
 */
export function transportError(
  ctx: ErrorContext,
  code: 'timeout' | 'stream_cut' | 'stream_spliced' | 'invalid_response' | 'invalid_request' | 'redirect',
  detail: string,
  options: { retryable: boolean; status?: number; cause?: unknown },
): ProviderError {
  const init: ProviderErrorInit = { code, retryable: options.retryable }
  if (options.status !== undefined) init.status = options.status
  if (options.cause !== undefined) init.cause = redactCause(options.cause, secretsOf(ctx))
  return new ProviderError(`${ctx.label}: ${redact(detail, secretsOf(ctx))}`, init)
}

/** Parses one event's JSON data; bad JSON is an `invalid_response` error quoting the start of it. */
export function parseEventJson(data: string, ctx: ErrorContext): unknown {
  try {
    return JSON.parse(data)
  } catch (cause) {
    const head = excerpt(data, 120, secretsOf(ctx))
    throw transportError(ctx, 'invalid_response', `the stream sent an event that is not JSON: ${head}`, {
      retryable: true,
      cause,
    })
  }
}

/**
 * Response headers that carry the provider's request id: OpenAI and most compatible servers,
 * Anthropic, Azure OpenAI's gateway. Gemini sends none (its body has a `responseId`).
 */
const REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'apim-request-id'] as const

/**
 * The provider's id of the request a response answers, for support tickets, without `ctx`'s
 * secrets: it is the server's text, quoted in messages and kept on errors.
 */
export function requestIdOf(headers: Headers, ctx: ErrorContext): string | undefined {
  for (const name of REQUEST_ID_HEADERS) {
    const value = headers.get(name)
    if (value) return redact(value, secretsOf(ctx))
  }
  return undefined
}

function describeThrown(thrown: unknown): string {
  if (!(thrown instanceof Error)) return messageOf(thrown)
  // undici reports "fetch failed" / "terminated" and puts the socket error in `cause`.
  const cause = thrown.cause
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code
    return `${thrown.message} (${typeof code === 'string' ? `${code}: ` : ''}${cause.message})`
  }
  return thrown.message
}

function optionalRetryAfter(ms: number | undefined): { retryAfterMs?: number } {
  return ms === undefined ? {} : { retryAfterMs: ms }
}

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === 'string' && value !== '') return value
  return undefined
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Whether a 200 may be an event stream: `text/event-stream`, or a type that does not say otherwise
 * (none, `text/plain`: some compatible servers send that). JSON, HTML and XML never are.
 */
export function isEventStreamLike(response: Response): boolean {
  const type = response.headers.get('content-type')?.toLowerCase() ?? ''
  return !/json|html|xml/.test(type)
}

/**
 * The `invalid_response` (not retried) for a 200 that is not an event stream, saying what arrived:
 * its type, its size (or that it was larger than what was read) and how it starts.
 */
export async function notAStream(response: Response, errors: ErrorContext): Promise<ProviderError> {
  const { text, truncated, broken } = await readQuotedBody(response, secretsOf(errors))
  const type = response.headers.get('content-type') ?? 'no content type'
  const bytes = `${new TextEncoder().encode(text).length} bytes`
  const size = truncated
    ? `more than ${MAX_QUOTED_BODY_BYTES} bytes`
    : broken
      ? `${bytes}, then the body broke off`
      : bytes
  const detail = `expected an event stream, got ${type} (${size}): ${excerpt(text, 200, secretsOf(errors))}`
  return transportError(errors, 'invalid_response', detail, { retryable: false })
}

/**
 * The start of a body to quote, at most {@link MAX_QUOTED_BODY_BYTES}, without the API key. It
 * reads a little past the cap and redacts before cutting, so a key across the cut leaves no prefix.
 */
async function readQuotedBody(response: Response, secrets: Secrets, onBytes?: () => void): Promise<BodyHead> {
  const head = await readBodyHead(response, MAX_QUOTED_BODY_BYTES + 4096, onBytes)
  const text = redact(head.text, secrets)
  return text.length > MAX_QUOTED_BODY_BYTES
    ? { text: text.slice(0, MAX_QUOTED_BODY_BYTES), truncated: true }
    : { ...head, text }
}
