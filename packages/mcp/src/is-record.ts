/** Whether `value` is a JSON object (not `null`, not a list): a schema, a tool, an argument set. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
