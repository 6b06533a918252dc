// jsonb holds no NUL character and no lone surrogate (Postgres refuses `\u0000` and an unpaired
// `\ud83d` in JSON input), yet a title may hold either: a pasted prompt, or one cut in the middle
// of an emoji to make a title. Such a string is stored as its JSON text, whose escapes are plain
// characters to jsonb, under a key no metadata field has; every other string is stored as it is, so
// rows written before read the same and `meta || patch` still replaces field by field.

/** The key of a wrapped string: `{ "kode:json": "\"a\\u0000b\"" }` reads back as `"a\u0000b"`. */
const WRAPPED = 'kode:json'

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

function jsonbHolds(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text)
}

/** The metadata as the `meta` column stores it: each string jsonb cannot hold wrapped. */
export function toMetaColumn(value: unknown): unknown {
  if (typeof value === 'string') return jsonbHolds(value) ? value : { [WRAPPED]: JSON.stringify(value) }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, toMetaColumn(field)]))
}

/** The metadata a `meta` column holds, its wrapped strings unwrapped. */
export function fromMetaColumn(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  const entries = Object.entries(value)
  const [only] = entries
  if (entries.length === 1 && only?.[0] === WRAPPED && typeof only[1] === 'string') {
    return JSON.parse(only[1]) as unknown
  }
  return Object.fromEntries(entries.map(([key, field]) => [key, fromMetaColumn(field)]))
}
