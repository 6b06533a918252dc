import { redact } from '@kode/providers/adapter'

/**
 * Why `value` cannot be an api root (`--base-url`, a config file's `baseUrl`), or `undefined` when
 * it can. The value is quoted without a password or key it may carry: stderr ends up in logs.
 */
export function baseUrlProblem(value: string): string | undefined {
  const quoted = `(got "${redact(value, undefined)}")`
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return `must be an http:// or https:// URL ${quoted}`
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `must be an http:// or https:// URL ${quoted}`
  // fetch throws for such a URL on every request, which would read as a network error, retried.
  if (url.username !== '' || url.password !== '')
    return `cannot carry a user name or password, since fetch refuses such a URL ${quoted}`
  return undefined
}
