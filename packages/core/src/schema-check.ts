import { FormatRegistry, type Static, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value, type ValueError } from '@sinclair/typebox/value'
import { stringFormatsOf, withoutStringFormats } from './string-formats.js'

/**
 * A check of values against a TypeBox schema where a string `format` is asserted only when a
 * checker for it is registered in TypeBox's `FormatRegistry`, and is otherwise an annotation (JSON
 * Schema's default). TypeBox alone refuses every value of a format it has no checker for, which
 * would make a tool with `format: 'email'` uncallable.
 */
export interface SchemaCheck<S extends TSchema = TSchema> {
  /** Whether `value` is valid. */
  check(value: unknown): value is Static<S>
  /** Why `value` is not valid, by the same rule as `check`: never an unknown format. */
  errors(value: unknown): Iterable<ValueError>
}

/**
 * How the check runs: `compiled` generates code (interpreting instead where a Content Security
 * Policy forbids it), for checks that run often; `interpreted` never generates code.
 */
export type CheckMode = 'compiled' | 'interpreted'

/** One version of the schema: the formats registered when it was made are the ones it asserts. */
interface Variant {
  readonly registered: readonly boolean[]
  readonly schema: TSchema
  readonly check: (value: unknown) => boolean
}

/**
 * Builds the check of `schema`. The registry is read at each check, for the schema's formats only
 * (no walk of the schema), so a format the host registers (or deletes) after this still counts from
 * the next check, as it did with TypeBox alone; the schema is prepared again (compiled, in
 * `compiled` mode) only when that changes. Compiling here throws what TypeBox throws for a schema it
 * cannot check. The schema itself is never changed and nothing is registered.
 */
export function createSchemaCheck<S extends TSchema>(schema: S, mode: CheckMode): SchemaCheck<S> {
  const formats = stringFormatsOf(schema)
  const build = (registered: readonly boolean[]): Variant => {
    const asserted = new Set(formats.filter((_, i) => registered[i]))
    const prepared =
      asserted.size === formats.length ? schema : withoutStringFormats(schema, (f) => asserted.has(f))
    return { registered, schema: prepared, check: checkOf(prepared, mode) }
  }
  let variant = build(formats.map(isRegistered))
  const current = (): Variant => {
    if (formats.some((format, i) => isRegistered(format) !== variant.registered[i]))
      variant = build(formats.map(isRegistered))
    return variant
  }
  return {
    check: (value): value is Static<S> => current().check(value),
    errors: (value) => Value.Errors(current().schema, value),
  }
}

function isRegistered(format: string): boolean {
  return FormatRegistry.Has(format)
}

function checkOf(schema: TSchema, mode: CheckMode): (value: unknown) => boolean {
  switch (mode) {
    case 'compiled':
      return compiled(schema)
    case 'interpreted':
      return (value) => Value.Check(schema, value)
    default: {
      const unknownMode: never = mode
      throw new Error(`unknown check mode ${String(unknownMode)}`)
    }
  }
}

function compiled(schema: TSchema): (value: unknown) => boolean {
  try {
    const check = TypeCompiler.Compile(schema)
    return (value) => check.Check(value)
  } catch (error) {
    // Compiling is `new Function`: refused under a Content Security Policy, then interpreted.
    if (error instanceof EvalError) return (value) => Value.Check(schema, value)
    throw error
  }
}
