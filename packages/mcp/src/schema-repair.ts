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
 * - `properties` as a list that is not empty (which names no property) becomes `properties: {}`
 *   too, and `found.uncheckable` is set: Ajv cannot compile such a schema, so nothing was ever
 *   checked against it, and checking the repaired one could refuse what passes today;
 * - a `required` that is not a list (draft-03's `required: true` in a property's schema, or any
 *   other value) is removed: it is not JSON Schema, and Ajv refuses to compile it, so it was
 *   never checked; naming the property in its parent's `required` would refuse calls that work;
 * - the entries of a `required` list that are not strings (no property has such a name; Ajv
 *   requires a property named by their text, providers refuse them) are dropped: a check that
 *   requires less refuses nothing it accepted.
 * Anything else is left as sent. A copy where anything changed, the rest shared; the same object
 * when nothing did. The server's object is never changed.
 */
export function repairSchema(
  schema: Record<string, unknown>,
  found: RepairNotes = { uncheckable: false },
): Record<string, unknown> {
  return fix(schema, 0, found) as Record<string, unknown>
}

/** What `repairSchema` tells of its repairs. */
export interface RepairNotes {
  /**
   * Set when a part of the schema as sent could not be compiled and was replaced by one that can:
   * values must not be checked against the repaired schema then.
   */
  uncheckable: boolean
}

function fix(schema: unknown, depth: number, found: RepairNotes): unknown {
  if (!isRecord(schema) || depth > MAX_DEPTH) return schema
  let out: Record<string, unknown> | undefined
  const set = (key: string, value: unknown) => {
    if (value === schema[key]) return
    out ??= { ...schema }
    out[key] = value
  }
  for (const key of SCHEMA_KEYWORDS) set(key, fix(schema[key], depth + 1, found))
  for (const key of SCHEMA_LIST_KEYWORDS) {
    const list = schema[key]
    if (!Array.isArray(list)) continue
    const fixed = list.map((item) => fix(item, depth + 1, found))
    if (fixed.some((item, i) => item !== list[i])) set(key, fixed)
  }
  for (const key of SCHEMA_MAP_KEYWORDS) {
    const map = schema[key]
    if (!isRecord(map)) continue
    let fixedMap: Record<string, unknown> | undefined
    for (const [name, value] of Object.entries(map)) {
      const fixed = fix(value, depth + 1, found)
      if (fixed === value) continue
      fixedMap ??= { ...map }
      fixedMap[name] = fixed
    }
    if (fixedMap) set(key, fixedMap)
  }
  if (Array.isArray(schema.properties)) {
    if (schema.properties.length > 0) found.uncheckable = true
    set('properties', {})
  }
  const { required } = schema
  if ('required' in schema && !Array.isArray(required)) {
    out ??= { ...schema }
    delete out.required
  } else if (Array.isArray(required) && required.some((name) => typeof name !== 'string')) {
    set(
      'required',
      required.filter((name) => typeof name === 'string'),
    )
  }
  const { type } = schema
  const isArray = type === 'array' || (Array.isArray(type) && type.includes('array'))
  if (isArray && schema.items === undefined) set('items', {})
  return out ?? schema
}
