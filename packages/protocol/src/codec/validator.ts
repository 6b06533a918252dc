import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler, type ValueError } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { CodecError, showValue } from './codec-error.js'

export interface Validator {
  /** Fast path: true when the value matches. */
  check(value: unknown): boolean
  /** The first mismatch as a `CodecError`, or `undefined` when the value matches. */
  firstError(value: unknown, basePath?: string): CodecError | undefined
}

/**
 * Compiles a schema on first use, so importing the package stays cheap; `compiled`, when given,
 * is the schema's check compiled ahead of time (see compiled-checks.generated.ts) and is used as is.
 */
export function lazyValidator(schema: TSchema, compiled?: (value: unknown) => boolean): Validator {
  let check = compiled
  return {
    check(value) {
      check ??= compile(schema)
      return check(value)
    },
    firstError(value, basePath = '') {
      if (this.check(value)) return undefined
      return describeMismatch(schema, value, basePath)
    },
  }
}

function compile(schema: TSchema): (value: unknown) => boolean {
  try {
    const compiled = TypeCompiler.Compile(schema)
    return (value) => compiled.Check(value)
  } catch {
    // Hosts with a CSP that forbids `new Function` still get validation, interpreted.
    return (value) => Value.Check(schema, value)
  }
}

/** Finds the first mismatch and explains it, descending into discriminated unions by their tag. */
function describeMismatch(schema: TSchema, value: unknown, basePath: string): CodecError {
  const first = Value.Errors(schema, value).First()
  if (!first) return new CodecError(basePath, describeSchema(schema))
  return explain(first, basePath)
}

function explain(error: ValueError, basePath: string): CodecError {
  const path = basePath + error.path
  const members = unionMembers(error.schema)
  if (members) {
    const tagged = discriminate(members, error.value)
    if (tagged.kind === 'member') return describeMismatch(tagged.schema, error.value, path)
    if (tagged.kind === 'unknown-tag') {
      return new CodecError(path, `${tagged.expected}`, { detail: `got ${tagged.got}` })
    }
  }
  if (error.value === undefined && error.path !== '') {
    return new CodecError(path, describeSchema(error.schema), { detail: 'missing' })
  }
  return new CodecError(path, describeSchema(error.schema), { detail: `got ${describeValue(error.value)}` })
}

type Discriminated =
  | { kind: 'member'; schema: TSchema }
  | { kind: 'unknown-tag'; expected: string; got: string }
  | { kind: 'none' }

const TAGS = ['type', 'role'] as const

/** For a union of objects tagged by `type` or `role`, picks the member the value claims to be. */
function discriminate(members: TSchema[], value: unknown): Discriminated {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'none' }
  for (const tag of TAGS) {
    const tags = members.map((m) => literalOf(m, tag))
    if (tags.some((t) => t === undefined)) continue
    const got = (value as Record<string, unknown>)[tag]
    const index = tags.indexOf(got as string)
    if (index >= 0) return { kind: 'member', schema: members[index]! }
    const names = tags.map((t) => JSON.stringify(t)).join(' | ')
    return {
      kind: 'unknown-tag',
      expected: `${tag} to be one of ${names}`,
      got: got === undefined ? `no ${tag}` : `${tag} ${showValue(got)}`,
    }
  }
  return { kind: 'none' }
}

function unionMembers(schema: TSchema): TSchema[] | undefined {
  return Array.isArray(schema.anyOf) ? (schema.anyOf as TSchema[]) : undefined
}

function literalOf(schema: TSchema, key: string): string | undefined {
  const prop = (schema.properties as Record<string, TSchema> | undefined)?.[key]
  return typeof prop?.const === 'string' ? prop.const : undefined
}

function describeSchema(schema: TSchema): string {
  if (typeof schema.const === 'string') return JSON.stringify(schema.const)
  if (schema.$id) return `a ${schema.$id}`
  const members = unionMembers(schema)
  if (members) return members.map(describeSchema).join(' or ')
  switch (schema.type) {
    case 'string':
      return schema.pattern ? `a string matching /${schema.pattern}/` : 'a string'
    case 'integer':
      return schema.minimum === 0 ? 'a non-negative integer' : 'an integer'
    case 'number':
      return 'a finite number'
    case 'boolean':
      return 'a boolean'
    case 'array':
      return 'an array'
    case 'object':
      return 'an object'
    default:
      return 'a valid value'
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return value.length > 40 ? 'a string' : JSON.stringify(value)
  if (typeof value === 'object') return 'an object'
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : typeof value
}
