/** One piece of streamed function-call arguments (Gemini 3 `functionCall.partialArgs`). */
export interface PartialArg {
  /** Where the value goes, e.g. `$.recipe.ingredients[0].name`. */
  jsonPath?: string
  stringValue?: string | null
  numberValue?: number | null
  boolValue?: boolean | null
  nullValue?: unknown
  /** More of this string follows in a later piece. */
  willContinue?: boolean | null
}

type Segment = string | number
type Container = Record<string, unknown> | unknown[]

/**
 * A `partialArgs` path Kode will not follow: it names a prototype (`__proto__`, `constructor`,
 * `prototype`), indexes past the end of an array, or puts a named key on an array. The event
 * mapper's caller reports it as an `invalid_response`.
 */
export class UnsafeArgumentPathError extends Error {
  override readonly name = 'UnsafeArgumentPathError'
}

/** Keys that reach a prototype when assigned by name; refused whatever the container. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/**
 * The arguments of one streamed call, built from its `partialArgs` pieces: each piece sets the
 * value at its JSON path (creating the objects and arrays on the way), and a string piece for a
 * path that already holds a string continues it. The server chooses the keys, so every step is
 * checked before it is taken (see {@link UnsafeArgumentPathError}): objects have no prototype,
 * arrays take only an index up to their length, and prototype keys are refused.
 */
export class StreamedArgs {
  readonly value: Record<string, unknown> = Object.create(null)
  // A long string arrives as many pieces under one path in a row, so the last path is parsed once.
  private lastPath: string | undefined
  private lastSegments: Segment[] = []

  add(pieces: readonly PartialArg[]): void {
    for (const piece of pieces) {
      const path = this.segments(piece.jsonPath)
      if (path.length === 0) continue
      const { container, key } = this.slot(path)
      checkStep(container, key, piece.jsonPath!)
      const existing = (container as Record<Segment, unknown>)[key]
      if (typeof piece.stringValue === 'string' && typeof existing === 'string') {
        ;(container as Record<Segment, unknown>)[key] = existing + piece.stringValue
        continue
      }
      const value = pieceValue(piece)
      if (value !== undefined) (container as Record<Segment, unknown>)[key] = value
    }
  }

  /** The segments of `jsonPath` (read-only: the array is reused for the next piece). */
  private segments(jsonPath: string | undefined): Segment[] {
    if (jsonPath === undefined) return []
    if (jsonPath !== this.lastPath) {
      this.lastPath = jsonPath
      this.lastSegments = parseJsonPath(jsonPath)
    }
    return this.lastSegments
  }

  /** The container that holds the last segment of `path`, created as needed. */
  private slot(path: Segment[]): { container: Container; key: Segment } {
    let container: Container = this.value
    for (let i = 0; i < path.length - 1; i++) {
      const segment = path[i]!
      checkStep(container, segment, this.lastPath!)
      const record = container as Record<Segment, unknown>
      let next = record[segment]
      if (typeof next !== 'object' || next === null) {
        next = typeof path[i + 1] === 'number' ? [] : Object.create(null)
        record[segment] = next
      }
      container = next as Container
    }
    return { container, key: path[path.length - 1]! }
  }
}

/** Refuses a step that could reach a prototype or grow an array by more than one slot. */
function checkStep(container: Container, key: Segment, path: string): void {
  const safe = Array.isArray(container)
    ? typeof key === 'number' && key <= container.length
    : typeof key === 'number' || !PROTOTYPE_KEYS.has(key)
  if (!safe)
    throw new UnsafeArgumentPathError(`unsafe partialArgs path ${JSON.stringify(path.slice(0, 200))}`)
}

/** `$.a.b[0]['c.d']` -> `['a', 'b', 0, 'c.d']`; `[]` for `$` or a path it cannot read. */
export function parseJsonPath(path: string): Segment[] {
  if (!path.startsWith('$')) return []
  const segments: Segment[] = []
  const pattern = /\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]/g
  let at = 1
  for (let match = pattern.exec(path); match; match = pattern.exec(path)) {
    if (match.index !== at) return []
    at = pattern.lastIndex
    if (match[2] !== undefined) segments.push(Number(match[2]))
    else segments.push(match[1] ?? match[3]!)
  }
  return at === path.length ? segments : []
}

function pieceValue(piece: PartialArg): unknown {
  if (typeof piece.stringValue === 'string') return piece.stringValue
  if (typeof piece.numberValue === 'number') return piece.numberValue
  if (typeof piece.boolValue === 'boolean') return piece.boolValue
  if ('nullValue' in piece) return null
  return undefined
}
