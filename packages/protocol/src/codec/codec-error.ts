import { cutText } from '../cut-text.js'

const CODEC_ERROR = Symbol.for('kode.CodecError')

/**
 * Input that does not match the protocol schemas. `path` is a JSON pointer to the offending value
 * (`''` for the whole value, `/parts/0/type` for a nested one); `expected` says what would be valid.
 */
export class CodecError extends Error {
  override readonly name = 'CodecError'
  readonly path: string
  readonly expected: string
  readonly [CODEC_ERROR] = true

  constructor(path: string, expected: string, options?: { cause?: unknown; detail?: string }) {
    const where = path === '' ? 'at the top level' : `at ${path}`
    super(`${where}: expected ${expected}${options?.detail ? ` (${options.detail})` : ''}`, {
      cause: options?.cause,
    })
    this.path = path
    this.expected = expected
  }

  /** True for a `CodecError` from any copy of this package. */
  static is(value: unknown): value is CodecError {
    return (
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CODEC_ERROR] === true
    )
  }
}

/** Names a JSON value's kind for error messages ("null", "an array", "string", ...). */
export function kindOf(value: unknown): string {
  if (value === null) return 'null'
  try {
    if (Array.isArray(value)) return 'an array'
  } catch {
    // A revoked proxy: it is an object, whatever it wrapped.
  }
  return typeof value
}

/** Most characters of a value an error message quotes: a corrupt line may hold megabytes there. */
const MAX_SHOWN_CHARS = 60

/**
 * A value as JSON for an error message, cut to its start when long, or its kind when JSON cannot
 * show it (a BigInt, a cycle).
 */
export function showValue(value: unknown): string {
  try {
    // A long string is cut before it is quoted, so its whole JSON is never built.
    const shown = typeof value === 'string' ? value.slice(0, MAX_SHOWN_CHARS + 1) : value
    const json = JSON.stringify(shown)
    return json === undefined ? kindOf(value) : cutText(json, MAX_SHOWN_CHARS)
  } catch {
    return kindOf(value)
  }
}

/**
 * A thrown value's message, without trusting it: what `JSON.parse` or a getter threw may be no
 * `Error` (a `null`), or an `Error` whose `message` getter throws.
 */
export function describeThrown(error: unknown): string {
  try {
    if (error instanceof Error && typeof error.message === 'string') return error.message
    return `threw ${kindOf(error)}`
  } catch {
    return 'threw a value that cannot be described'
  }
}

/**
 * The value threw while it was read (a getter, a proxy trap, a revoked proxy): it cannot be a
 * record or an event, and what it threw is kept as the cause.
 */
export function unreadable(cause: unknown): CodecError {
  return new CodecError('', 'a value that can be read', {
    cause,
    detail: `reading it threw: ${describeThrown(cause)}`,
  })
}
