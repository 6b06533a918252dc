import { CodecError } from './codec-error.js'
import { MAX_RECORD_NESTING, tooDeep } from './nesting.js'

/**
 * `value` as `JSON.stringify` would write it, as a value rather than text: `toJSON` applied, boxed
 * primitives unwrapped, objects reduced to their own enumerable string-keyed fields (an inherited
 * or non-enumerable field is not written), `undefined`, functions and symbols left out of objects
 * and `null` in arrays, non-finite numbers `null`. It lets validation check what encoding would
 * write without writing the JSON: strings are shared, not copied. What JSON cannot hold is a
 * `CodecError`: a cycle, a `BigInt`, or nesting deeper than `MAX_RECORD_NESTING`.
 */
export function writtenView(value: unknown): unknown {
  return new WrittenView().of(value, '', 0)
}

class WrittenView {
  private readonly ancestors = new Set<object>()
  private readonly path: string[] = []

  of(input: unknown, key: string, depth: number): unknown {
    const value = unboxed(withToJson(input, key))
    if (typeof value === 'number') return Number.isFinite(value) ? value : null
    if (typeof value === 'bigint') throw this.unwritable(`got ${typeof value}`)
    if (typeof value !== 'object' || value === null) return value
    if (depth >= MAX_RECORD_NESTING) throw tooDeep()
    if (this.ancestors.has(value)) throw this.unwritable('a cycle')
    this.ancestors.add(value)
    const view = Array.isArray(value) ? this.array(value, depth + 1) : this.object(value, depth + 1)
    this.ancestors.delete(value)
    return view
  }

  private array(value: readonly unknown[], depth: number): unknown[] {
    const out: unknown[] = []
    for (let index = 0; index < value.length; index++) {
      this.path.push(String(index))
      const item = this.of(value[index], String(index), depth)
      this.path.pop()
      out.push(isOmitted(item) ? null : item)
    }
    return out
  }

  private object(value: object, depth: number): Record<string, unknown> {
    // Without a prototype, an assignment makes an own field whatever the key (`__proto__` too) and
    // whatever setters a prototype might hold.
    const out: Record<string, unknown> = Object.create(null)
    for (const key of Object.keys(value)) {
      this.path.push(key)
      const field = this.of((value as Record<string, unknown>)[key], key, depth)
      this.path.pop()
      if (!isOmitted(field)) out[key] = field
    }
    return out
  }

  private unwritable(detail: string): CodecError {
    const pointer = this.path.map((key) => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')
    return new CodecError(pointer, 'a value JSON can represent', { detail })
  }
}

/** What `JSON.stringify` writes in place of `value`: its `toJSON(key)` result when it has one. */
function withToJson(value: unknown, key: string): unknown {
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    const toJson = (value as { toJSON?: unknown }).toJSON
    if (typeof toJson === 'function') return toJson.call(value, key)
  }
  return value
}

/** `JSON.stringify` writes a `new Number(1)`, `new String('a')` or `new Boolean(true)` as the primitive. */
function unboxed(value: unknown): unknown {
  if (value instanceof Number) return Number(value)
  if (value instanceof String) return String(value)
  if (value instanceof Boolean) return value.valueOf()
  return value
}

/** A value `JSON.stringify` leaves out of an object (and writes as `null` in an array). */
function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol'
}
