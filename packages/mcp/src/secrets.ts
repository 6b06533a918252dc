import type { ToolOutput } from '@kode/core'
import { headerCredentials, redact, redactCause } from '@kode/providers/adapter'
import { McpConnectionError } from './errors.js'
import type { McpServerOptions } from './options.js'

/**
 * What a server was given that must not come back in what Kode prints or keeps: every header value
 * (with a `Bearer` token also alone), and the values of the environment variables and command-line
 * flags named like credentials (`GITHUB_TOKEN`, `API_KEY`, `DB_PASSWORD`, `--token X`,
 * `--api-key=X`...). A server may echo them (a 401 body, its
 * stderr, a tool's error), and those words end up in errors, tool results and the model's next request.
 */
export function serverSecrets(options: McpServerOptions): string[] {
  if (options.url === undefined)
    return [...headerCredentials(options.env), ...headerCredentials(flagValues(options.args))]
  const headers = options.headers ?? {}
  return [...Object.values(headers), ...headerCredentials(headers)]
}

/** `error` as it may be shown: a copy with its message and cause redacted, when either quotes a secret. */
export function safeConnectionError(
  error: McpConnectionError,
  secrets: readonly string[],
): McpConnectionError {
  const message = redact(error.message, secrets)
  const cause = redactCause(error.cause, secrets)
  if (message === error.message && cause === error.cause) return error
  const copy = new McpConnectionError(
    error.code,
    error.serverName,
    message,
    cause === undefined ? undefined : { cause },
  )
  if (error.stack !== undefined) copy.stack = redact(error.stack, secrets)
  return copy
}

/**
 * The command line's flags with their values, by name (`--token X` and `--token=X` both give
 * `token: X`), for the rule that names credentials. A flag followed by another flag has no value.
 */
function flagValues(args: readonly string[] | undefined): Record<string, string> {
  const flags: Record<string, string> = {}
  for (let i = 0; i < (args?.length ?? 0); i++) {
    const match = /^--?([^=\s]+)(?:=([\s\S]*))?$/.exec(args![i]!)
    if (!match) continue
    const next = args![i + 1]
    const value = match[2] ?? (next !== undefined && !next.startsWith('-') ? next : undefined)
    if (value !== undefined) flags[match[1]!] = value
  }
  return flags
}

/**
 * A tool's `error` output as it may be kept: its text, and the structured content kept for UIs,
 * redacted. Structured content that no longer reads as JSON once redacted is left out.
 */
export function safeToolOutput(output: ToolOutput, secrets: readonly string[]): ToolOutput {
  const safe: ToolOutput = { ...output, outputText: redact(output.outputText, secrets) }
  if (output.uiExtra?.type !== 'json') return safe
  const json = JSON.stringify(output.uiExtra.value)
  const redacted = redact(json, secrets)
  if (redacted === json) return safe
  try {
    safe.uiExtra = { type: 'json', value: JSON.parse(redacted) }
  } catch {
    delete safe.uiExtra
  }
  return safe
}
