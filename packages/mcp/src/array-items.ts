import { isRecord } from './is-record.js'

/** Keywords whose value is a schema. */
const SCHEMA_KEYWORDS = [
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
] as const
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items'] as const
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = [
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
] as const
/** Deeper than this, a schema is left as it is: a hostile one must not overflow the stack. */
const MAX_DEPTH = 64

/**
 * `schema` with `items: {}` in every array schema that has no `items`: the same meaning (any
 * items), but OpenAI refuses a request whose tools hold an array schema without `items` ("array
 * schema missing items"), and MCP servers often send one. A copy where anything changed; the
 * rest is shared.
 */
export function withArrayItems(schema: Record<string, unknown>): Record<string, unknown> {
  return fix(schema, 0) as Record<string, unknown>
}

function fix(schema: unknown, depth: number): unknown {
  if (!isRecord(schema) || depth > MAX_DEPTH) return schema
  let out: Record<string, unknown> | undefined
  const set = (key: string, value: unknown) => {
    if (value === schema[key]) return
    out ??= { ...schema }
    out[key] = value
  }
  for (const key of SCHEMA_KEYWORDS) set(key, fix(schema[key], depth + 1))
  for (const key of SCHEMA_LIST_KEYWORDS) {
    const list = schema[key]
    if (!Array.isArray(list)) continue
    const fixed = list.map((item) => fix(item, depth + 1))
    if (fixed.some((item, i) => item !== list[i])) set(key, fixed)
  }
  for (const key of SCHEMA_MAP_KEYWORDS) {
    const map = schema[key]
    if (!isRecord(map)) continue
    let fixedMap: Record<string, unknown> | undefined
    for (const [name, value] of Object.entries(map)) {
      const fixed = fix(value, depth + 1)
      if (fixed === value) continue
      fixedMap ??= { ...map }
      fixedMap[name] = fixed
    }
    if (fixedMap) set(key, fixedMap)
  }
  const { type } = schema
  const isArray = type === 'array' || (Array.isArray(type) && type.includes('array'))
  if (isArray && schema.items === undefined) set('items', {})
  return out ?? schema
}
