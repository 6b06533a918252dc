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
 */
export function refusal(req: IncomingMessage, allowedHosts: ReadonlySet<string>): string | undefined {
  const host = hostnameOf(req.headers.host)
  if (host === undefined || !allowedHosts.has(host)) return 'unknown host'
  return undefined
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
