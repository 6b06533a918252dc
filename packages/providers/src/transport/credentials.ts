/**
 * Header names that carry a credential: `authorization` and its proxy form, cookies, and any name
 * with key, token, secret, password, auth or credential in it (`api-key` for Azure,
 * `cf-aig-authorization`, `ocp-apim-subscription-key`, `x-auth-token`...).
 */
const CREDENTIAL_HEADER = /key|token|secret|passw|auth|credential|cookie|signature/i

/**
 * The credentials among a host's extra request headers (or any name-to-value map, such as the
 * environment given to a child process: `GITHUB_TOKEN`, `DB_PASSWORD`), for errors to remove as
 * they remove the API key: each value whose name says it is a credential, and for `Scheme token`
 * values (`Bearer ...`, `Basic ...`) the token alone too, since a server may echo it without its
 * scheme.
 */
export function headerCredentials(headers: Readonly<Record<string, string>> | undefined): string[] {
  const out: string[] = []
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!CREDENTIAL_HEADER.test(name)) continue
    out.push(value)
    const token = /^\s*[A-Za-z][\w-]*\s+(\S.*)$/.exec(value)?.[1]
    if (token !== undefined) out.push(token)
  }
  return out
}
