import type { ResponseFormat } from '@kode/providers'
import type { TSchema } from '@sinclair/typebox'
import { AgentError } from '../errors.js'
import { createSchemaCheck, type SchemaCheck } from '../schema-check.js'

/** A run's structured output, checked and ready: what the provider is asked for, and the schema to validate. */
export interface OutputSpec {
  /** The TypeBox schema the answer must satisfy. */
  readonly schema: TSchema
  /** Its check, made once per run: interpreted, never generated code (see `checkAnswer`). */
  readonly check: SchemaCheck
  /** What every model call of the task asks for (`LLMRequest.responseFormat`). */
  readonly format: ResponseFormat
}

/**
 * Checks `run(input, { output })`'s schema and builds the request's response format. The schema
 * must describe an object at its root (`type: 'object'`, as `Type.Object` makes: every api's
 * native mechanism needs one there); throws `AgentError` (`invalid_options`) otherwise. The name is
 * the schema's `$id` or `title` made to fit OpenAI's rule, else `output`. Strict mode is asked for
 * only when the schema satisfies OpenAI's strict rules (see {@link isStrictCompatible}).
 */
export function outputSpec(schema: TSchema): OutputSpec {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new AgentError('invalid_options', 'output must be a TypeBox schema')
  if (schema.type !== 'object')
    throw new AgentError(
      'invalid_options',
      `output must describe an object (Type.Object); got ${JSON.stringify(schema.type ?? 'a schema without a type')}`,
    )
  const format: ResponseFormat = {
    type: 'json_schema',
    name: schemaName(schema),
    schema: schema as Readonly<Record<string, unknown>>,
    strict: isStrictCompatible(schema),
  }
  if (typeof schema.description === 'string') format.description = schema.description
  return { schema, check: createSchemaCheck(schema, 'interpreted'), format }
}

/** `$id` or `title`, reduced to what OpenAI accepts (`[a-zA-Z0-9_-]{1,64}`); default `output`. */
function schemaName(schema: TSchema): string {
  const raw =
    typeof schema.$id === 'string' ? schema.$id : typeof schema.title === 'string' ? schema.title : ''
  const name = raw
    .replace(/[^a-zA-Z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64)
  return name === '' ? 'output' : name
}

/**
 * Keywords OpenAI's strict mode refuses with a 400 (its structured-outputs guide: composition by
 * `allOf`, `not`, `if`/`then`/`else` and the dependent keywords is unsupported, and unions go as
 * `anyOf` only). TypeBox makes `allOf` for `Type.Intersect` and `not` for `Type.Not`.
 */
const STRICT_REFUSED_KEYWORDS = [
  'allOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'patternProperties',
] as const

/** The string `format`s strict mode knows; it refuses any other. */
const STRICT_FORMATS: ReadonlySet<string> = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
])

/**
 * Whether OpenAI's strict mode accepts the schema: every object closes its properties
 * (`additionalProperties: false`) and requires all of them, at every depth (properties, array
 * items, `anyOf`, `$defs`), and no keyword or string format it refuses appears (see
 * {@link STRICT_REFUSED_KEYWORDS}). A schema it would refuse is sent with `strict: false`: it still
 * guides the model, and the answer is validated either way.
 */
export function isStrictCompatible(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return true
  if (Array.isArray(schema)) return schema.every(isStrictCompatible)
  const node = schema as Record<string, unknown>
  if (STRICT_REFUSED_KEYWORDS.some((key) => node[key] !== undefined)) return false
  if (typeof node.format === 'string' && !STRICT_FORMATS.has(node.format)) return false
  if (node.type === 'object' || node.properties !== undefined) {
    if (node.additionalProperties !== false) return false
    const properties = (node.properties ?? {}) as Record<string, unknown>
    const required = Array.isArray(node.required) ? node.required : []
    if (!Object.keys(properties).every((key) => required.includes(key))) return false
    if (!Object.values(properties).every(isStrictCompatible)) return false
  }
  for (const key of ['items', 'anyOf', 'prefixItems'] as const) {
    if (node[key] !== undefined && !isStrictCompatible(node[key])) return false
  }
  for (const key of ['$defs', 'definitions'] as const) {
    const defs = node[key]
    if (typeof defs === 'object' && defs !== null && !Object.values(defs).every(isStrictCompatible))
      return false
  }
  return true
}

/**
 * What the request's instructions say of the structured answer when no native response format may
 * carry it: a text strategy (ReAct, CodeAct) reads the model's actions from its text, which a
 * native format would hold to the schema on every turn. The schema, and that the final answer is a
 * JSON object valid against it.
 */
export function outputInstructions(spec: OutputSpec): string {
  return [
    'Give your final answer as a JSON object that is valid against this JSON schema, and nothing else:',
    JSON.stringify(spec.schema),
  ].join('\n')
}
