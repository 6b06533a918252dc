import type { Static, TSchema } from '@sinclair/typebox'
import { AgentError } from '../errors.js'
import { jsonHazard } from '../json-hazards.js'
import { createSchemaCheck, type SchemaCheck } from '../schema-check.js'
import { thrownText } from '../thrown-text.js'

/** The outcome of reading a tool call's `argumentsJson`. */
export type ParsedArguments<T> = { ok: true; args: T } | { ok: false; error: string }

/** At most this many schema mismatches are listed to the model; one is usually enough to fix a call. */
const MAX_REPORTED_ERRORS = 5

/**
 * A parser for one tool's arguments: JSON text in, typed and validated arguments out. Empty text
 * means no arguments (`{}`), as several providers send it. JSON that `JSON.parse` reads
 * ambiguously or lossily is refused (see {@link jsonHazard}). `validate`, when given, checks the
 * parsed value instead of the schema. Otherwise the schema is compiled here, once per tool (where a
 * Content Security Policy forbids compiling, it is interpreted instead); a schema TypeBox cannot
 * check throws an `AgentError` (`invalid_tool`) naming `toolName`, rather than failing the first call.
 * A string `format` is asserted only when a checker for it is registered in TypeBox's
 * `FormatRegistry` at the call (see {@link createSchemaCheck}); otherwise it is an annotation.
 */
export function createArgumentParser<P extends TSchema>(
  toolName: string,
  schema: P,
  validate?: (args: unknown) => ParsedArguments<Static<P>>,
): (json: string) => ParsedArguments<Static<P>> {
  const check = validate ? undefined : compile(toolName, schema)
  return (json) => {
    let value: unknown
    try {
      value = json.trim() === '' ? {} : JSON.parse(json)
    } catch (error) {
      return { ok: false, error: `the arguments are not valid JSON (${(error as Error).message})` }
    }
    // What JSON.parse reads ambiguously or lossily (a repeated key, `__proto__`, an integer
    // beyond 2^53) never reaches the check, nor the tool.
    const hazard = jsonHazard(json)
    if (hazard !== undefined) return { ok: false, error: hazard }
    if (!check) return validated(validate!, value)
    if (check.check(value)) return { ok: true, args: value }
    return { ok: false, error: describeMismatches(check, value) }
  }
}

/**
 * What a host's `validate` decided. It may throw on arguments it did not expect (JSON `null`, an
 * array) or return something else than a decision: either way the call is refused with an error
 * the model reads, rather than failing the task and leaving the call unanswered.
 */
function validated<T>(validate: (args: unknown) => ParsedArguments<T>, value: unknown): ParsedArguments<T> {
  try {
    const parsed = validate(value)
    if (parsed?.ok === true) return { ok: true, args: parsed.args }
    if (parsed?.ok === false) {
      return { ok: false, error: typeof parsed.error === 'string' ? parsed.error : String(parsed.error) }
    }
  } catch (error) {
    return { ok: false, error: `the arguments could not be checked (${thrownText(error)})` }
  }
  return { ok: false, error: 'the arguments could not be checked' }
}

function compile<P extends TSchema>(toolName: string, schema: P): SchemaCheck<P> {
  try {
    return createSchemaCheck(schema, 'compiled')
  } catch (error) {
    throw new AgentError(
      'invalid_tool',
      `tool ${toolName}: its parameters are not a schema TypeBox can check (${error instanceof Error ? error.message : String(error)}); ` +
        'wrap plain JSON Schema in Type.Unsafe and check it with validate',
      { cause: error },
    )
  }
}

/**
 * Lists the mismatches as `path: message`, `/` being the arguments object itself; one per path
 * (a missing property is not also reported as being of the wrong type).
 */
function describeMismatches(check: SchemaCheck, value: unknown): string {
  const lines: string[] = []
  const paths = new Set<string>()
  let more = 0
  for (const error of check.errors(value)) {
    const path = error.path === '' ? '/' : error.path
    if (paths.has(path)) continue
    paths.add(path)
    if (lines.length === MAX_REPORTED_ERRORS) {
      more++
      continue
    }
    lines.push(`${path}: ${error.message}`)
  }
  if (more > 0) lines.push(`(${more} more)`)
  return lines.length > 0 ? lines.join('; ') : 'the arguments do not match the schema'
}
