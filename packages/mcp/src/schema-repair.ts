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
 * `schema` with what providers that check tool schemas strictly refuse (the whole request, over
 * one tool) repaired, at any depth, each repair keeping what the server meant:
 * - an array schema without `items` gets `items: {}` (any items): OpenAI refuses one ("array
 *   schema missing items"), and MCP servers often send one;
 * - `properties: []` (how PHP encodes an empty object) becomes `properties: {}`;
 * - a `required` that is not a list (draft-03's `required: true` in a property's schema, or any
 *   other value) is removed: it is not JSON Schema, and Ajv refuses to compile it, so it was
 *   never checked; naming the property in its parent's `required` would refuse calls that work.
 * Anything else is left as sent. A copy where anything changed, the rest shared; the same object
 * when nothing did. The server's object is never changed.
 */
export function repairSchema(schema: Record<string, unknown>): Record<string, unknown> {
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
  if (Array.isArray(schema.properties) && schema.properties.length === 0) set('properties', {})
  if ('required' in schema && !Array.isArray(schema.required)) {
    out ??= { ...schema }
    delete out.required
  }
  const { type } = schema
  const isArray = type === 'array' || (Array.isArray(type) && type.includes('array'))
  if (isArray && schema.items === undefined) set('items', {})
  return out ?? schema
}
