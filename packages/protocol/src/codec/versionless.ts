import type { TObject, TSchema } from '@sinclair/typebox'
import { MESSAGE_SCHEMAS, RECORD_SCHEMAS } from './checked-schemas.js'
import { versionlessCopies } from './compiled-checks.generated.js'

type Copy = (typeof versionlessCopies)[string]

/** The generated copy of each schema's records, by the value of its tag (`role` or `type`). */
function copiesByTag(tag: string, schemas: readonly TObject[]): ReadonlyMap<unknown, Copy> {
  const copies = new Map<unknown, Copy>()
  for (const schema of schemas) {
    const literal = (schema.properties[tag] as TSchema | undefined)?.const
    const copy = schema.$id !== undefined ? versionlessCopies[schema.$id] : undefined
    if (typeof literal === 'string' && copy) copies.set(literal, copy)
  }
  return copies
}

const byRole = copiesByTag('role', MESSAGE_SCHEMAS)
const byType = copiesByTag('type', RECORD_SCHEMAS)

/**
 * A parsed history line without its `v` field: a new object with the line's other keys, in their
 * order. Lines as `encodeHistoryEvent` writes them (`v` first, then the keys of one record type in
 * its schema's order) take that type's generated copy, a few times cheaper than copying every key
 * generically; any other line (unknown fields, another order, an unknown type) is copied
 * generically, to the same result.
 */
export function withoutVersion(value: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(value)
  if (keys[0] === 'v') {
    const tag = keys[1]
    const copy = tag === 'role' ? byRole.get(value.role) : tag === 'type' ? byType.get(value.type) : undefined
    const copied = copy?.(value, keys)
    if (copied !== undefined) return copied
  }
  const { v, ...rest } = value
  return rest
}
