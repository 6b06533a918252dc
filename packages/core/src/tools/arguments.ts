import type { Static, TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { AgentError } from '../errors.js'
import { errorMessageOf } from './execute-tool-call.js'

/** The outcome of reading a tool call's `argumentsJson`. */
export type ParsedArguments<T> = { ok: true; args: T } | { ok: false; error: string }

/** At most this many schema mismatches are listed to the model; one is usually enough to fix a call. */
const MAX_REPORTED_ERRORS = 5

/**
 * A parser for one tool's arguments: JSON text in, typed and validated arguments out. Empty text
 * means no arguments (`{}`), as several providers send it. `validate`, when given, checks the
 * parsed value instead of the schema. Otherwise the schema is compiled here, once per tool (where a
 * Content Security Policy forbids compiling, it is interpreted instead); a schema TypeBox cannot
 * check throws an `AgentError` (`invalid_tool`) naming `toolName`, rather than failing the first call.
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
    if (!check) return validated(validate!, value)
    if (check(value)) return { ok: true, args: value as Static<P> }
    return { ok: false, error: describeMismatches(schema, value) }
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
    return { ok: false, error: `the arguments could not be checked (${errorMessageOf(error)})` }
  }
  return { ok: false, error: 'the arguments could not be checked' }
}

function compile(toolName: string, schema: TSchema): (value: unknown) => boolean {
  try {
    const compiled = TypeCompiler.Compile(schema)
    return (value) => compiled.Check(value)
  } catch (error) {
    // Compiling is `new Function`: refused under a Content Security Policy, then interpreted.
    if (error instanceof EvalError) return (value) => Value.Check(schema, value)
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
function describeMismatches(schema: TSchema, value: unknown): string {
  const lines: string[] = []
  const paths = new Set<string>()
  let more = 0
  for (const error of Value.Errors(schema, value)) {
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
