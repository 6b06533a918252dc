import { AgentError } from '../errors.js'

/** Returns `value` if it is a positive integer; throws `AgentError` (`invalid_options`) naming it otherwise. */
export function positiveInteger(name: string, value: number): number {
  if (Number.isInteger(value) && value > 0) return value
  throw new AgentError('invalid_options', `${name} must be a positive integer (got ${value})`)
}

/** Returns `value` if it is a positive number; throws `AgentError` (`invalid_options`) naming it otherwise. */
export function positive(name: string, value: number): number {
  if (value > 0) return value
  throw new AgentError('invalid_options', `${name} must be a positive number (got ${value})`)
}
