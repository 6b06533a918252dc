import { redactUrlSecrets } from './redact-url-secrets.js'

/**
 * A credential in text: the value of a header or field that carries one (`Authorization: Bearer …`,
 * `x-api-key=…`, `"api-key": "…"`, `"access_token": "…"`, `client_secret=…`, `password=…`), also
 * in JSON quoted inside a string (`\"x-api-key\":\"…\"`) and as the end of an environment
 * variable's name (`OPENAI_API_KEY=…`, `GITHUB_TOKEN=…`: words joined by `_` before the name,
 * matched without a lookbehind, which browsers before 2023 cannot parse).
 * Values shorter than 12 characters are left: they are words ("Authorization: required"), not
 * keys. A value ends at a space, a quote, a backslash, `,;&` or a closing bracket.
 */
const CREDENTIAL =
  /\b((?:[A-Za-z0-9]*_)*(?:(?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key|apikey|api_key|cookie|token|secret|password|passwd))(\\?["']?\s*[:=]\s*\\?["']?)(?:(bearer|basic|token)\s+)?[^\s"'\\,;&})\]]{12,}/gi
/** A bearer or basic token anywhere. */
const BEARER = /\b(bearer|basic)\s+([A-Za-z0-9._~+/=-]{12,})/gi
/**
 * A word of prose (`authentication`, `Configuration.`, `pre-authentication`), which follows a
 * free-standing "basic" or "bearer" in an error's English far more often than a token does: a
 * token has digits, capitals inside or symbols. After a header's name, the value is a credential
 * whatever it looks like.
 */
const WORD = /^[A-Z]?[a-z]+(?:-[a-z]+)*\.?$/
/**
 * A key by its own shape, named nowhere: OpenAI's and Anthropic's (`sk-…`, `sk-proj-…`,
 * `sk-ant-…`, with a digit somewhere: `sk-learn-compatible-models` is a word, see `isKey`), OpenRouter's (`sk-or-…`), Google's (`AIza…`), xAI's (`xai-…`) and Groq's (`gsk_…`).
 */
const KEY_SHAPE =
  /\b(?:sk-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{30,}|xai-[A-Za-z0-9]{20,}|gsk_[A-Za-z0-9]{20,})/g

/**
 * Whether a match of `KEY_SHAPE` is a key: an `sk-…` one needs a digit. Checked on the match, not
 * by a lookahead in the pattern, which would scan to the end of a run once per `-sk-` in it.
 */
const isKey = (match: string) => !match.startsWith('sk-') || /\d/.test(match)

/**
 * `text` with every credential it shows replaced by `[redacted]`: the value of a header or field
 * that carries one, a bearer token, a URL's `user:password@` and key-named query parameters, and
 * keys of the major providers' shapes. A rule by shape, for
 * text whose secrets are not known (a hook's or a tool's error message, an error a durable engine
 * stores); where the key is known, redacting its value is surer.
 */
export function redactCredentials(text: string): string {
  return redactUrlSecrets(text)
    .replace(CREDENTIAL, (_match, name: string, sep: string, scheme: string | undefined) =>
      scheme === undefined ? `${name}${sep}[redacted]` : `${name}${sep}${scheme} [redacted]`,
    )
    .replace(BEARER, (match, scheme: string, token: string) =>
      WORD.test(token) ? match : `${scheme} [redacted]`,
    )
    .replace(KEY_SHAPE, (match) => (isKey(match) ? '[redacted]' : match))
}
