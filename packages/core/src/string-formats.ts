import { Kind, type TSchema } from '@sinclair/typebox'

/**
 * The `format` names of the schema's string nodes, each once. TypeBox checks `format` on strings
 * only, so these are the formats a check of the schema can assert.
 */
export function stringFormatsOf(schema: TSchema): readonly string[] {
  const formats = new Set<string>()
  visit(schema, (node) => {
    if (isStringWithFormat(node)) formats.add(node.format)
  })
  return [...formats]
}

/**
 * The schema without the `format` of the string nodes whose format `assert` refuses, so a check of
 * it treats them as annotations. The schema itself is not changed: the copy shares every node that
 * has nothing to drop, and keeps the rest (symbol keys included, which TypeBox reads) as it is.
 */
export function withoutStringFormats(schema: TSchema, assert: (format: string) => boolean): TSchema {
  return strip(schema, assert) as TSchema
}

type StringWithFormat = Record<PropertyKey, unknown> & { format: string }

function isStringWithFormat(node: Record<PropertyKey, unknown>): node is StringWithFormat {
  return node[Kind] === 'String' && typeof node.format === 'string'
}

/** Plain objects and arrays are schema structure; anything else (a Date default, a function) is a leaf. */
function isPlainObject(value: unknown): value is Record<PropertyKey, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function visit(value: unknown, onNode: (node: Record<PropertyKey, unknown>) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) visit(item, onNode)
  } else if (isPlainObject(value)) {
    onNode(value)
    for (const key of Reflect.ownKeys(value)) visit(value[key], onNode)
  }
}

function strip(value: unknown, assert: (format: string) => boolean): unknown {
  if (Array.isArray(value)) {
    const items = value.map((item) => strip(item, assert))
    return items.every((item, i) => item === value[i]) ? value : items
  }
  if (!isPlainObject(value)) return value
  const drop = isStringWithFormat(value) && !assert(value.format)
  let copy: Record<PropertyKey, unknown> | undefined
  for (const key of Reflect.ownKeys(value)) {
    const child = strip(value[key], assert)
    if (child === value[key]) continue
    copy ??= { ...value }
    copy[key] = child
  }
  if (!drop) return copy ?? value
  const { format: _, ...rest } = copy ?? value
  return rest
}
