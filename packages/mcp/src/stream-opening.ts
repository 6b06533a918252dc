/**
 * What one request of the SDK's attempt to open an event stream with a GET (the notification
 * stream, or an answer stream it resumes, over streamable HTTP; the event stream of HTTP+SSE) came
 * to, as the SDK takes it: the one rule they are all followed by. `opened`: a 2xx. `not-offered`:
 * a 405, on which the SDK stops trying, without an error. `redirected`: a redirect the SDK follows with another request, which decides the attempt
 * (no outcome of its own). `refused`: any other status, a redirect the SDK does not follow
 * included: the attempt failed. `unreachable`: no response at all: the attempt failed too.
 */
export type OpenOutcome =
  | { readonly kind: 'opened' | 'not-offered' | 'redirected' }
  | { readonly kind: 'refused'; readonly status: number }
  | { readonly kind: 'unreachable'; readonly error: unknown }

/** An outcome that failed the attempt. */
export type FailedOpening = Extract<OpenOutcome, { kind: 'refused' | 'unreachable' }>

/** Follows the requests of one stream's attempts to open it, which the SDK makes one after another. */
export interface StreamOpenings {
  /** What the response to a GET of `input` counts as. */
  answered(input: RequestInfo | URL, response: Response): OpenOutcome
  /** A GET got no response. */
  unreachable(error: unknown): FailedOpening
}

/** A follower for one stream (its own count of the redirects followed in the attempt under way). */
export function streamOpenings(): StreamOpenings {
  let followed = 0
  return {
    answered(input, response) {
      if (sdkFollows(urlOf(input), response, followed)) {
        followed++
        return { kind: 'redirected' }
      }
      followed = 0
      if (response.ok) return { kind: 'opened' }
      if (response.status === 405) return { kind: 'not-offered' }
      return { kind: 'refused', status: response.status }
    },
    unreachable(error) {
      followed = 0
      return { kind: 'unreachable', error }
    },
  }
}

/** An HTTP status as an error's detail says it, telling a redirect that was not followed. */
export function statusDetail(status: number): string {
  return isRedirect(status) ? `HTTP ${status}, a redirect it does not follow` : `HTTP ${status}`
}

/** As many redirects as the SDK follows in one attempt; the next one fails it. */
const MAX_REDIRECTS = 5
const REDIRECT_STATUSES: readonly number[] = [301, 302, 303, 307, 308]

function isRedirect(status: number): boolean {
  return status >= 300 && status < 400
}

/**
 * Whether the SDK follows the redirect `response` to a GET of `from`, `followed` redirects into
 * the attempt: its `redirectPolicy: 'same-origin'` (the default, which `httpTransport` keeps; see
 * `followWithinOrigin` in the SDK's `shared/transport.js`). It follows a redirect status with a
 * Location that parses, within `from`'s origin (or to its https form, both on default ports),
 * adding no user name or password, at most `MAX_REDIRECTS` times; the tests pin this against it.
 */
function sdkFollows(from: URL, response: Response, followed: number): boolean {
  if (!REDIRECT_STATUSES.includes(response.status) || followed >= MAX_REDIRECTS) return false
  const location = response.headers.get('location')
  if (!location || !URL.canParse(location, from)) return false
  const to = new URL(location, from)
  const addsUserinfo =
    (to.username !== '' || to.password !== '') &&
    (to.username !== from.username || to.password !== from.password)
  return !addsUserinfo && withinOrigin(from, to)
}

/**
 * Whether `to` is within `from`'s origin as the SDK takes it: the same scheme, host and port, or
 * its https form with both on default ports.
 */
export function withinOrigin(from: URL, to: URL): boolean {
  if (from.protocol === to.protocol && from.hostname === to.hostname && from.port === to.port) return true
  return (
    from.hostname === to.hostname &&
    from.protocol === 'http:' &&
    from.port === '' &&
    to.protocol === 'https:' &&
    to.port === ''
  )
}

function urlOf(input: RequestInfo | URL): URL {
  return new URL(input instanceof Request ? input.url : input)
}
