import { type ErrorContext, transportError } from './failures.js'

/**
 * The headers of a request: the transport's own, the adapter's, then the host's, each replacing a
 * header of the same name before it whatever its case (`fetch` would join `authorization` and
 * `Authorization` into one value, `Bearer a, Bearer b`). Each value is
 * checked the way `fetch` will check it, so a value HTTP forbids (an API key holding a newline)
 * fails here as a non-retryable `invalid_request` that names the header, before anything is sent.
 * `fetch` itself would throw a TypeError quoting the value, which is the key.
 */
export function requestHeaders(
  adapter: Record<string, string>,
  host: Record<string, string> | undefined,
  ctx: ErrorContext,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
  }
  override(headers, adapter)
  if (host) override(headers, host)
  for (const name in headers) {
    const problem = headerProblem(name, headers[name]!)
    if (problem === undefined) continue
    const detail = `the request header ${JSON.stringify(name)} has a value HTTP does not allow (a line break or another forbidden character; check the API key)`
    throw transportError(ctx, 'invalid_request', detail, { retryable: false, cause: problem })
  }
  return headers
}

/**
 * {@link requestHeaders} for one client, made once and kept: an adapter sends the same headers on
 * every request, and checking them costs a `Headers` object each time. Made again when the
 * adapter's headers change (an adapter may keep one object and update it in place). The host's
 * headers are those of the client's config, read once.
 */
export function clientHeaders(
  host: Record<string, string> | undefined,
  ctx: ErrorContext,
): (adapter: Record<string, string>) => Record<string, string> {
  const hostHeaders = host ? { ...host } : undefined
  let sent: [string, string][] = []
  let headers: Record<string, string> | undefined
  return (adapter) => {
    if (headers === undefined || !sameEntries(adapter, sent)) {
      headers = requestHeaders(adapter, hostHeaders, ctx)
      sent = Object.entries(adapter)
    }
    return headers
  }
}

/** Sets each of `over` on `headers`, first removing a header of the same name in another case. */
function override(headers: Record<string, string>, over: Record<string, string>): void {
  for (const [name, value] of Object.entries(over)) {
    const lower = name.toLowerCase()
    for (const known of Object.keys(headers)) if (known.toLowerCase() === lower) delete headers[known]
    // Defined, not assigned: a `__proto__` name from parsed JSON stays a header.
    Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true })
  }
}

function sameEntries(headers: Record<string, string>, entries: readonly [string, string][]): boolean {
  let count = 0
  for (const name in headers) {
    const entry = entries[count++]
    if (entry === undefined || entry[0] !== name || entry[1] !== headers[name]) return false
  }
  return count === entries.length
}

/** Why `fetch` would refuse the header, as it would say it; `undefined` when it would take it. */
function headerProblem(name: string, value: string): unknown {
  if (FORBIDDEN_VALUE.test(value)) return new TypeError(`invalid ${name} header value`)
  try {
    new Headers([[name, value]])
    return undefined
  } catch (thrown) {
    return thrown
  }
}

/**
 * What HTTP forbids in a header value beyond what `Headers` refuses (NUL, CR, LF): the other
 * control characters, which undici refuses only as it sends, failing like a network error that
 * is then retried.
 */
const FORBIDDEN_VALUE = /[^\t\x20-\x7e\x80-\uffff]/
