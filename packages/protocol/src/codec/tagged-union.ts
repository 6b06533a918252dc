import type { TObject, TSchema } from '@sinclair/typebox'
import { CodecError, kindOf, showValue } from './codec-error.js'
import { lazyValidator, type Validator } from './validator.js'

/**
 * Validates a union of objects tagged by one key (`type` or `role`) by dispatching on the tag,
 * so each member compiles on its own and errors name the exact path inside the member. `compiled`
 * holds checks compiled ahead of time, by member `$id`; the other members compile on first use.
 */
export class TaggedUnion<T> {
  private readonly byTag = new Map<string, Validator>()
  private readonly expected: string

  constructor(
    readonly tag: string,
    members: readonly TObject[],
    compiled: Readonly<Record<string, (value: unknown) => boolean>> = {},
  ) {
    for (const member of members) {
      const literal = (member.properties[tag] as TSchema | undefined)?.const
      if (typeof literal !== 'string') throw new TypeError(`union member has no literal "${tag}"`)
      const id = member.$id
      this.byTag.set(
        literal,
        lazyValidator(member, id !== undefined && Object.hasOwn(compiled, id) ? compiled[id] : undefined),
      )
    }
    this.expected = `${tag} to be one of ${[...this.byTag.keys()].map((t) => JSON.stringify(t)).join(' | ')}`
  }

  has(tagValue: string): boolean {
    return this.byTag.has(tagValue)
  }

  /** Returns the value typed, or throws a `CodecError` naming the first mismatch. */
  validate(value: unknown, basePath = ''): T {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new CodecError(basePath, 'an object', { detail: `got ${kindOf(value)}` })
    }
    const tagValue = (value as Record<string, unknown>)[this.tag]
    const validator = typeof tagValue === 'string' ? this.byTag.get(tagValue) : undefined
    if (!validator) {
      throw new CodecError(`${basePath}/${this.tag}`, this.expected, {
        detail: tagValue === undefined ? 'missing' : `got ${showValue(tagValue)}`,
      })
    }
    if (validator.check(value)) return value as T
    throw validator.firstError(value, basePath)!
  }
}
