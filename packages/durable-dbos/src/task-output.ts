import { type AssistantMessage, joinText } from '@kode/protocol'
import type { TSchema } from '@sinclair/typebox'
import { Value, ValueErrorType } from '@sinclair/typebox/value'
import { DurableTaskError } from './errors.js'

/** The structured-output schemas durable tasks may ask for, by name (`DurableAgentsOptions.outputs`). */
export type OutputSchemas = Readonly<Record<string, TSchema>>

/**
 * The `outputs` option, checked when the durable agents are made: each schema describes an object,
 * as `agent.run(input, { output })` requires, so a task never fails later over its schema.
 */
export function checkedOutputs(outputs: unknown): OutputSchemas {
  if (outputs === undefined) return {}
  if (typeof outputs !== 'object' || outputs === null || Array.isArray(outputs)) {
    throw new DurableTaskError('invalid_options', 'outputs must map names to TypeBox object schemas')
  }
  for (const [name, schema] of Object.entries(outputs)) {
    if (typeof schema !== 'object' || schema === null || (schema as { type?: unknown }).type !== 'object') {
      throw new DurableTaskError(
        'invalid_options',
        `outputs.${name} must describe an object (Type.Object), as agent.run's output does`,
      )
    }
  }
  return outputs as OutputSchemas
}

/**
 * The schema a task names. The workflow records the name, never the schema: DBOS keeps its input
 * as JSON, which would drop what TypeBox needs to check a value, so the schema is the worker's own
 * (every worker must declare the same `outputs`).
 */
export function outputSchema(outputs: OutputSchemas, name: string | undefined): TSchema | undefined {
  if (name === undefined) return undefined
  if (typeof name !== 'string' || !Object.hasOwn(outputs, name)) {
    throw new DurableTaskError(
      'invalid_options',
      `the task asks for output ${JSON.stringify(name)}, which is not among this worker's outputs: give every worker the same outputs`,
    )
  }
  return outputs[name]
}

/**
 * The structured output of a task that completed before its workflow could record its outcome,
 * read from its final answer as the engine read it: the text as JSON, else a fenced ```json block
 * in it, else the message's last text part; the first that parses is the answer, and it is kept
 * only when valid against the schema (a string `format` no checker is registered for is an
 * annotation, as for the engine). `undefined` when it is not: it is never a value the schema refuses.
 */
export function rebuiltOutput(schema: TSchema, message: AssistantMessage | undefined): unknown {
  if (message === undefined) return undefined
  const text = joinText(message.parts)
  const candidates = [text]
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n\s*```/.exec(text)
  if (fenced) candidates.push(fenced[1]!)
  const parts = message.parts.filter((part) => part.type === 'text')
  if (parts.length > 1) candidates.push(joinText([parts[parts.length - 1]!]))
  for (const candidate of candidates) {
    if (candidate.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(candidate)
    } catch {
      continue
    }
    return valid(schema, value) ? value : undefined
  }
  return undefined
}

function valid(schema: TSchema, value: unknown): boolean {
  try {
    if (Value.Check(schema, value)) return true
    // TypeBox refuses a value of a format it has no checker for; the engine does not.
    for (const error of Value.Errors(schema, value)) {
      if (error.type !== ValueErrorType.StringFormatUnknown) return false
    }
    return true
  } catch {
    return false
  }
}
