/** Arguments a server accepts as text: the model's JSON, or `{}` when it never closed or is not JSON. */
export function sendableArguments(json: string, incomplete: boolean | undefined): string {
  if (incomplete) return '{}'
  try {
    JSON.parse(json)
    return json
  } catch {
    return '{}'
  }
}

/**
 * Arguments for wires that want an object (Anthropic `input`, Gemini `args`): the model's JSON
 * object, or `{}` when it never closed or is not an object.
 */
export function argumentsObject(json: string, incomplete: boolean | undefined): Record<string, unknown> {
  if (incomplete) return {}
  try {
    const value: unknown = JSON.parse(json)
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {}
  } catch {
    return {}
  }
}
