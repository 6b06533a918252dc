import { redactCredentials } from '@kode/protocol/helpers'
import { ProviderError } from './transport/errors.js'

/**
 * The api root requests go to, without trailing slashes. A relative root (`/llm/v1`) is resolved
 * against the page's address where there is one (a browser, a worker), so requests and redirects
 * have a full URL. With the default fetch, a root that is no http(s) URL (`api.openai.com/v1`,
 * `localhost:11434/v1`, a relative root in Node) is refused here, as `invalid_config`: fetch
 * would fail every request with it, which reads as a network error and is retried; so is a root
 * with a `user:password@`, which fetch refuses. A host's own
 * fetch decides for itself which roots it takes.
 */
export function resolveBaseUrl(root: string, label: string, hostFetch: boolean): string {
  const trimmed = root.replace(/\/+$/, '')
  const url = parse(trimmed)
  if (url && (url.protocol === 'http:' || url.protocol === 'https:')) {
    // fetch refuses a URL with credentials on every request ("Request cannot be constructed from
    // a URL that includes credentials"), which would read as a network error and be retried.
    if (!hostFetch && (url.username || url.password))
      throw new ProviderError(
        `${label}: baseUrl ${JSON.stringify(shown(root))} carries a user:password@, which fetch refuses; send credentials with apiKey or headers`,
        { code: 'invalid_config', retryable: false },
      )
    // An absolute root is kept as written (a query on it stays where the host put it).
    return isAbsolute(trimmed) ? trimmed : url.href.replace(/\/+$/, '')
  }
  if (hostFetch) return url && !isAbsolute(trimmed) ? url.href.replace(/\/+$/, '') : trimmed
  throw new ProviderError(
    `${label}: baseUrl ${JSON.stringify(shown(root))} is not an http(s) URL${pageHref() === undefined && !isAbsolute(trimmed) ? ' (a relative root needs a page to resolve it against)' : ''}; write it whole, such as http://localhost:11434/v1`,
    { code: 'invalid_config', retryable: false },
  )
}

/**
 * The root as an error may name it: a malformed root can still carry a key (`…?key=AIza…`) or a
 * `user:password@` (with no scheme, which the URL rule would not see), and errors are printed.
 */
function shown(root: string): string {
  return redactCredentials(root.replace(/^[^/?#@\s]+@/, '[redacted]@'))
}

function isAbsolute(root: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(root)
}

/** The root as a URL: absolute, or relative to the page's address; `undefined` when neither reads. */
function parse(root: string): URL | undefined {
  try {
    return isAbsolute(root) ? new URL(root) : new URL(root, pageHref())
  } catch {
    return undefined
  }
}

/**
 * The address of the page or worker the code runs in, when it runs in one. Deno throws on reading
 * `location` unless it was started with `--location`: that is no page either.
 */
function pageHref(): string | undefined {
  try {
    const href = (globalThis as { location?: { href?: unknown } }).location?.href
    return typeof href === 'string' ? href : undefined
  } catch {
    return undefined
  }
}
