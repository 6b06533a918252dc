import { isRecord } from './is-record.js'

/** What a schema that is only a reference may say besides it: where and how to read it, and notes. */
const BESIDE_REF = new Set([
  '$ref',
  'definitions',
  '$defs',
  '$schema',
  '$id',
  'title',
  'description',
  '$comment',
])
/** What the named definition must not say: it would mean something else at the top level. */
const NOT_IN_TARGET = [
  '$ref',
  '$id',
  '$schema',
  'definitions',
  '$defs',
  '$anchor',
  '$dynamicAnchor',
  '$recursiveAnchor',
] as const

/**
 * A schema that is only `$ref: '#/definitions/<name>'` (or `#/$defs/<name>`) plus its definitions,
 * as some generators write one, with that one reference replaced by what it names: providers need
 * the arguments' `type: 'object'` and `properties` at the top level. The definitions are kept, so
 * references within them (to themselves, to each other) still resolve, and the meaning is the
 * same. Any other schema, or a reference that is not that simple, is returned as it is: this is
 * not general reference resolution.
 */
export function inlineTopLevelRef(schema: Record<string, unknown>): Record<string, unknown> {
  const { $ref } = schema
  if (typeof $ref !== 'string') return schema
  if (Object.keys(schema).some((key) => !BESIDE_REF.has(key))) return schema
  const match = /^#\/(definitions|\$defs)\/([^/]+)$/.exec($ref)
  if (!match) return schema
  const definitions = schema[match[1]!]
  const name = decodePointerToken(match[2]!)
  if (name === undefined || !isRecord(definitions) || !Object.hasOwn(definitions, name)) return schema
  const target = definitions[name]
  if (!isRecord(target) || NOT_IN_TARGET.some((key) => key in target)) return schema
  const { $ref: _, ...rest } = schema
  return { ...rest, ...target }
}

/** A JSON Pointer token as the name it stands for (`~1` is `/`, `~0` is `~`, URI-escaped). */
function decodePointerToken(token: string): string | undefined {
  try {
    return decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~')
  } catch {
    return undefined
  }
}
