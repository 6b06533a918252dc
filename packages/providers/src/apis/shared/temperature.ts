import type { FixedTemperature, LLMRequest } from '../../types.js'

/**
 * The temperature a request sends: the request's, unless the catalog says the model refuses one
 * (always, or while it reasons), which the API answers with a 400.
 */
export function sentTemperature(
  request: LLMRequest,
  fixed: FixedTemperature | undefined,
): number | undefined {
  if (fixed === undefined) return request.temperature
  switch (fixed) {
    case 'always':
      return undefined
    case 'whileReasoning':
      return request.reasoning ? undefined : request.temperature
    default:
      // A host's catalog entry may hold a value this version does not know: send as set.
      fixed satisfies never
      return request.temperature
  }
}
