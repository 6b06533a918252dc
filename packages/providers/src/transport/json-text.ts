/**
 * A value of a request body given as its JSON text. An adapter that keeps the JSON of what it
 * sends (each history message serialised once, then re-sent as text: see `JsonTextCache`) puts
 * one in `WireRequest.body`, as the body or as one of its top-level fields, and the transport
 * writes the text where the value goes instead of serialising the value again.
 *
 * `JSON.stringify` of a body holding one gives the same bytes as the transport sends (`toJSON`
 * parses the text back), so code that serialises a body itself keeps working.
 */
export class JsonText {
  /** JSON text, as `JSON.stringify` writes it (the transport does not check it). */
  readonly text: string

  constructor(text: string) {
    this.text = text
  }

  /** The value the text holds, for `JSON.stringify`. */
  toJSON(): unknown {
    return JSON.parse(this.text)
  }
}

/**
 * The JSON text the transport sends for `body`: `JSON.stringify(body)`, with a {@link JsonText}
 * (the body, or a top-level field of a plain object) written as its text.
 */
export function bodyJson(body: unknown): string {
  if (body instanceof JsonText) return body.text
  if (!isPlainObject(body)) return JSON.stringify(body)
  const record = body as Record<string, unknown>
  const keys = Object.keys(record)
  if (!keys.some((key) => record[key] instanceof JsonText)) return JSON.stringify(body)
  let out = '{'
  for (const key of keys) {
    const value = record[key]
    const text = value instanceof JsonText ? value.text : JSON.stringify(value)
    // `undefined`, a function or a symbol: JSON.stringify leaves the field out.
    if (text === undefined) continue
    if (out.length > 1) out += ','
    out += `${JSON.stringify(key)}:${text}`
  }
  return `${out}}`
}

/** An object `JSON.stringify` writes field by field: not an array, no `toJSON` of its own. */
function isPlainObject(value: unknown): value is object {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  )
}
