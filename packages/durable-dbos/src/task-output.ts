import type { TSchema } from '@sinclair/typebox'
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
