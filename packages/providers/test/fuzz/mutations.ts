import fc from 'fast-check'

/** Keys a hostile server may put anywhere, to reach a prototype or confuse a lookup. */
export const HOSTILE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'length',
  'then',
]

type Json = unknown
type Path = (string | number)[]

/** Every path to a value inside `value`, the root included. */
function pathsOf(value: Json, path: Path = [], out: Path[] = []): Path[] {
  out.push(path)
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) pathsOf(value[i], [...path, i], out)
  else if (value && typeof value === 'object')
    for (const key of Object.keys(value)) pathsOf((value as Record<string, Json>)[key], [...path, key], out)
  return out
}

/** Defines `key` as an own data property, the way `JSON.parse` does, even for `__proto__`. */
function put(target: object, key: string | number, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

function at(root: Json, path: Path): Json {
  let value = root
  for (const key of path) value = (value as Record<string | number, Json>)[key]
  return value
}

/** One change to one parsed event. */
export type Mutation =
  | { kind: 'replace'; pick: number; value: Json }
  | { kind: 'hostile'; pick: number; key: string; value: Json }
  | { kind: 'delete'; pick: number }

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), value: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({
    kind: fc.constant('hostile' as const),
    pick: fc.nat(),
    key: fc.constantFrom(...HOSTILE_KEYS),
    value: fc.jsonValue({ maxDepth: 2 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
)

/** `line` (one JSON event) with `mutation` applied, as JSON text again. */
export function mutate(line: string, mutation: Mutation): string {
  const root = JSON.parse(line) as Json
  const paths = pathsOf(root)
  const path = paths[mutation.pick % paths.length]!
  if (path.length === 0) return JSON.stringify(mutation.kind === 'replace' ? mutation.value : root)
  const parent = at(root, path.slice(0, -1)) as Record<string | number, Json>
  const key = path[path.length - 1]!
  switch (mutation.kind) {
    case 'replace':
      put(parent, key, mutation.value)
      break
    case 'hostile': {
      // On an object: the key an array cannot take (`length`) stays a question for objects.
      const target = at(root, path)
      if (isObject(target)) put(target, mutation.key, mutation.value)
      else if (isObject(parent)) put(parent, mutation.key, mutation.value)
      break
    }
    case 'delete':
      if (Array.isArray(parent)) parent.splice(key as number, 1)
      else delete parent[key]
      break
  }
  return JSON.stringify(root)
}

/** A recorded stream changed the ways a broken or hostile server changes one. */
export interface StreamDamage {
  mutations: { line: number; mutation: Mutation }[]
  /** Events dropped or repeated, by index. */
  drop: number[]
  repeat: number[]
  /** Keep only this many events (a stream cut at an event boundary). */
  keep: number | undefined
}

export const damageArb: fc.Arbitrary<StreamDamage> = fc.record({
  mutations: fc.array(fc.record({ line: fc.nat(), mutation: mutationArb }), { maxLength: 4 }),
  drop: fc.array(fc.nat(), { maxLength: 2 }),
  repeat: fc.array(fc.nat(), { maxLength: 2 }),
  keep: fc.option(fc.nat(), { nil: undefined }),
})

/** `lines` with `damage` done to them. */
export function damage(lines: readonly string[], damage: StreamDamage): string[] {
  let out = [...lines]
  if (out.length === 0) return out
  for (const { line, mutation } of damage.mutations) {
    const i = line % out.length
    out[i] = mutate(out[i]!, mutation)
  }
  const dropped = new Set(damage.drop.map((i) => i % out.length))
  const repeated = new Set(damage.repeat.map((i) => i % out.length))
  out = out.flatMap((line, i) => (dropped.has(i) ? [] : repeated.has(i) ? [line, line] : [line]))
  return damage.keep === undefined ? out : out.slice(0, damage.keep % (out.length + 1))
}

function isObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
