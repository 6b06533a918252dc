/**
 * A URL's `user:password@`: what follows `://` up to an `@`, with no `/`, `?`, `#`, space or quote
 * between. It starts at the `://` rather than at the scheme, which any run of letters and dots
 * could begin: scanning from each of them to the end of the run would be quadratic.
 */
const URL_USERINFO = /:\/\/[^\s/?#@"'<>]+@/g
/**
 * The value of a query or fragment parameter named like a credential: `key`, `api_key`,
 * `access_token`, `client_secret`, `subscription-key`, `sig`, ... (a name that is or ends in `key`,
 * `apikey`, `token`, `secret`, `password`, `passwd`, `sig`, `signature`, `auth` or
 * `credential(s)`).
 */
const KEY_PARAM =
  /([?&;#](?:[\w.~-]*?[-_.])?(?:key|apikey|token|secret|password|passwd|sig|signature|auth|credentials?)=)[^&#\s"'<>]+/gi

/**
 * `text` with what a URL can carry as a secret replaced by `[redacted]`: the `user:password@` of
 * every URL and the value of every query or fragment parameter named like a key.
 */
export function redactUrlSecrets(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text
  return text.replace(URL_USERINFO, '://[redacted]@').replace(KEY_PARAM, '$1[redacted]')
}
