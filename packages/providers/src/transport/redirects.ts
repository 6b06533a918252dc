import { originAndPath, type ProviderError, withRequestId } from './errors.js'
import type { ErrorContext } from './failures.js'
import { requestIdOf, transportError } from './failures.js'

/** How many redirects one request may follow before it fails. */
export const MAX_REDIRECTS = 5

/** What {@link fetchFollowingRedirects} needs besides the request. */
export interface RedirectPolicy {
  fetch: typeof fetch
  /** Follow a redirect to another origin (with the API key and the prompt). Default: refuse. */
  crossOrigin: boolean
  errors: ErrorContext
}

/**
 * POSTs `init` to `url`, following redirects itself instead of leaving them to `fetch`: `fetch`
 * would carry the auth headers and the prompt to whatever origin a `Location` names, and turn a
 * POST into a GET on a 301/302/303. A redirect within the origin is followed with the same
 * request; one to another origin fails with code `redirect` (not retried) unless the host opted in.
 * A browser's `fetch` hides where a redirect goes (an opaque redirect): that fails as `redirect` too,
 * and so does a redirect with no `Location` to follow. A relative URL (a relative root sent through
 * the host's fetch, outside a page) has no origin of its own: see {@link whereFrom}.
 */
export async function fetchFollowingRedirects(
  url: string,
  init: RequestInit,
  policy: RedirectPolicy,
): Promise<Response> {
  let current = url
  for (let hops = 0; ; hops++) {
    const response = await policy.fetch(current, { ...init, redirect: 'manual' })
    if (response.type === 'opaqueredirect')
      throw refused(policy, 'the server redirected the request elsewhere')
    if (!isRedirect(response.status)) return response
    await response.body?.cancel().catch(() => undefined)
    const location = response.headers.get('location')
    const from = whereFrom(current, response.url)
    if (!location) throw withoutLocation(policy, response, from)
    const next = resolve(location, from.url)
    if (!next) throw refused(policy, `the server redirected to an unreadable location ${location}`)
    const sameOrigin = next.origin === from.url.origin || next.origin === from.reached
    if (!sameOrigin && !policy.crossOrigin)
      throw refused(
        policy,
        `the server redirected (${response.status}) to another origin: ${originAndPath(next)}; the API key and prompt were not sent there (set followCrossOriginRedirects to allow it)`,
      )
    // fetch refuses a URL with credentials in it, with a TypeError that would pass for a network error.
    if (next.username !== '' || next.password !== '')
      throw refused(
        policy,
        `the server redirected (${response.status}) to a URL with a user:password@ in it, which fetch cannot send: ${originAndPath(next)}`,
      )
    if (hops + 1 > MAX_REDIRECTS) throw refused(policy, `more than ${MAX_REDIRECTS} redirects`)
    // Within the origin, a relative request stays relative: the host's fetch places it as it placed
    // the first one.
    current = from.relative && sameOrigin ? next.pathname + next.search : next.href
  }
}

/** Stands for the origin a host's fetch sends a relative URL to, which Kode cannot know. */
const HOST_ORIGIN = 'http://host-fetch.invalid'

/** Where a request went, for reading its redirect. */
interface RequestPlace {
  /** Its URL; a relative one placed under {@link HOST_ORIGIN}. */
  url: URL
  relative: boolean
  /** The origin the response says it came from (`response.url`), when the request was relative. */
  reached: string | undefined
}

/**
 * `current` as a URL to resolve a `Location` against. A relative one (a relative root sent through
 * the host's fetch, outside a page) stands under a placeholder origin: a relative `Location` stays
 * in the origin the host's fetch chose, and an absolute one is in it only when it names the origin
 * the response came from (`response.url`, which a fetch that made the request sets); any other is
 * another origin.
 */
function whereFrom(current: string, responseUrl: string): RequestPlace {
  try {
    return { url: new URL(current), relative: false, reached: undefined }
  } catch {
    const url = new URL(current, HOST_ORIGIN)
    let reached: string | undefined
    try {
      const origin = responseUrl ? new URL(responseUrl).origin : undefined
      if (origin !== undefined && origin !== 'null') reached = origin
    } catch {
      reached = undefined
    }
    return { url, relative: true, reached }
  }
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308
}

function resolve(location: string, base: URL): URL | undefined {
  try {
    return new URL(location, base)
  } catch {
    return undefined
  }
}

/** A redirect that names no target: there is nothing to follow, and sending the request again gets the same answer. */
function withoutLocation(policy: RedirectPolicy, response: Response, from: RequestPlace): ProviderError {
  const requestId = requestIdOf(response.headers, policy.errors)
  const where = requestId ? ` [request ${requestId}]` : ''
  const url = from.relative ? from.url.pathname : originAndPath(from.url)
  const detail = `HTTP ${response.status} redirect without a Location header from ${url}${where}`
  const error = transportError(policy.errors, 'redirect', detail, {
    retryable: false,
    status: response.status,
  })
  return withRequestId(error, requestId)
}

function refused(policy: RedirectPolicy, detail: string) {
  return transportError(policy.errors, 'redirect', detail, { retryable: false })
}
