import type { IncomingMessage } from 'node:http'

/** The names a server bound to loopback is reached by. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]']

/**
 * Why the server refuses to answer `req`, or `undefined` when it may. The server reads files and
 * runs a model with the user's key, so it must only answer its own page.
 *
 * The `Host` header must name one of `allowedHosts` (hostnames, no port): a site that rebinds its
 * own DNS name to 127.0.0.1 (DNS rebinding) is same-origin with the server in the browser's eyes,
 * and could otherwise read every session and drive the agent; its requests carry its own name.
 *
 * A request with an `Origin` must come from the server's own origin: a page of any other site
 * can make the browser POST here (a form, a `no-cors` fetch) and start a task with the user's
 * key, or interrupt one (CSRF). Browsers send `Origin` on every such request; other clients
 * (curl, a script) send none and are not a browser acting for someone else.
 */
export function refusal(req: IncomingMessage, allowedHosts: ReadonlySet<string>): string | undefined {
  const host = hostnameOf(req.headers.host)
  if (host === undefined || !allowedHosts.has(host)) return 'unknown host'
  const origin = req.headers.origin
  if (origin !== undefined && hostOfOrigin(origin) !== req.headers.host!.toLowerCase())
    return 'cross-origin request'
  return undefined
}

/**
 * Whether `req` names more than one `Host` (HTTP/1.1 makes that a `400`). Node reads the first;
 * a proxy in front may read another, and let through a name this server would refuse.
 */
export function hasSeveralHosts(req: IncomingMessage): boolean {
  return (req.headersDistinct.host?.length ?? 0) > 1
}

/**
 * Whether `req` says its body is JSON. Forms and `no-cors` fetches can only send text, url-encoded
 * or multipart bodies without the browser asking the server first (a CORS preflight, which this
 * server never grants), so this keeps other sites out even where a browser sends no `Origin`.
 */
export function isJson(req: IncomingMessage): boolean {
  return /^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')
}

/** `host[:port]` of an `Origin` header, or `undefined` for `null` and anything else not a URL. */
function hostOfOrigin(origin: string): string | undefined {
  try {
    return new URL(origin).host || undefined
  } catch {
    return undefined
  }
}

/** The hostname of a `Host` header (`[::1]` for IPv6, lower case), or `undefined` if it is not one. */
function hostnameOf(header: string | undefined): string | undefined {
  // Only a host and a port: `evil@127.0.0.1` or a path would parse, and name something else.
  if (!header || /[\s@/\\?#]/.test(header)) return undefined
  try {
    return new URL(`http://${header}`).hostname
  } catch {
    return undefined
  }
}
