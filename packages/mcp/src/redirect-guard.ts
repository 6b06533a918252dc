import { McpConnectionError } from './errors.js'
import { withinOrigin } from './stream-opening.js'

/**
 * Wraps an HTTP transport's `fetch` so that a POST answered with a redirect to another origin
 * fails with `McpConnectionError` `redirect_refused`, naming where it pointed. The SDK follows
 * redirects within the server's origin only, so the request and the headers the host configured
 * (its credentials) never go there; this makes its refusal say so, instead of a bare HTTP status.
 * Outside the exchange watch (see `httpTransport`): the server answered, so the refusal is no lost
 * exchange. GETs are left as they are: the SDK reports their unfollowed redirects itself, and
 * the exchange watch counts them as failed stream openings.
 */
export function refuseCrossOriginRedirects(fetchFn: typeof fetch, serverName: string): typeof fetch {
  return async (input, init) => {
    const response = await fetchFn(input, init)
    if ((init?.method ?? 'GET').toUpperCase() !== 'POST') return response
    const target = crossOriginTarget(urlOf(input), response)
    if (target === undefined) return response
    await response.body?.cancel().catch(() => undefined)
    throw new McpConnectionError(
      'redirect_refused',
      serverName,
      `MCP server "${serverName}" redirected its request to another origin (${target}), which Kode does not follow: the headers configured for the server (its credentials) would go there. If the server has moved, set its url to the new location.`,
    )
  }
}

const REDIRECT_STATUSES: readonly number[] = [301, 302, 303, 307, 308]

/**
 * Where `response` redirects a request of `from`, when that is another origin: without user name,
 * password, query or fragment, which may carry secrets.
 */
function crossOriginTarget(from: URL, response: Response): string | undefined {
  if (!REDIRECT_STATUSES.includes(response.status)) return undefined
  const location = response.headers.get('location')
  if (!location || !URL.canParse(location, from)) return undefined
  const to = new URL(location, from)
  if (withinOrigin(from, to)) return undefined
  to.username = to.password = to.search = to.hash = ''
  return to.href
}

function urlOf(input: RequestInfo | URL): URL {
  return new URL(input instanceof Request ? input.url : input)
}
