// jsonb holds no NUL character and no lone surrogate (Postgres refuses `\u0000` and an unpaired
// `\ud83d` in JSON input), yet a title may hold either: a pasted prompt, or one cut in the middle
// of an emoji to make a title. Such a string is stored as its JSON text, whose escapes are plain
// characters to jsonb, under a key no metadata field has; every other string is stored as it is, so
// rows written before read the same and `meta || patch` still replaces field by field. A link
// (`subAgent`, `forkedFrom`) may carry fields of a caller's own: an object with a key jsonb cannot
// hold, or one that looks like a wrapped value itself, is wrapped whole the same way, so it reads
// back as given instead of failing the insert or being unwrapped into something else.

/** The key of a wrapped value: `{ "kode:json": "\"a\\u0000b\"" }` reads back as `"a\u0000b"`. */
const WRAPPED = 'kode:json'

function jsonbHolds(text: string): boolean {
  return !text.includes('\u0000') && text.isWellFormed()
}

function wrap(value: unknown): { [WRAPPED]: string } {
  return { [WRAPPED]: JSON.stringify(value) }
}

function isWrapped(keys: readonly string[]): boolean {
  return keys.length === 1 && keys[0] === WRAPPED
}

/** Whether jsonb cannot hold `value` as it is, or would read it back as a wrapped value. */
function needsWrap(value: unknown): boolean {
  if (typeof value === 'string') return !jsonbHolds(value)
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) return value.some(needsWrap)
  const keys = Object.keys(value)
  return isWrapped(keys) || !keys.every(jsonbHolds) || Object.values(value).some(needsWrap)
}

/**
 * The metadata as the `meta` column stores it (`value` as JSON has it: no `undefined`, no
 * `toJSON`): a string or an array jsonb cannot hold wrapped, and an object whose keys it cannot
 * hold or that would read as a wrapped value; any other object field by field.
 */
export function toMetaColumn(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return needsWrap(value) ? wrap(value) : value
  }
  const keys = Object.keys(value)
  if (isWrapped(keys) || !keys.every(jsonbHolds)) return wrap(value)
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, toMetaColumn(field)]))
}

/** The metadata a `meta` column holds, its wrapped values unwrapped. */
export function fromMetaColumn(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  const entries = Object.entries(value)
  const [only] = entries
  if (isWrapped(entries.map(([key]) => key)) && typeof only?.[1] === 'string') {
    return JSON.parse(only[1]) as unknown
  }
  return Object.fromEntries(entries.map(([key, field]) => [key, fromMetaColumn(field)]))
}
