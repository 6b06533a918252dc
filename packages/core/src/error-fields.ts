/** What a failure's `status` and `code` carry on: an HTTP status and a provider's error code. */
export interface StatusAndCode {
  status?: number
  code?: string
}

/**
 * The `status` and `code` `from` has, for a record or an error built from it: a field it lacks
 * stays absent (never `undefined`), as records and errors are compared and written whole.
 */
export function statusAndCode(from: {
  readonly status?: number | undefined
  readonly code?: string | undefined
}): StatusAndCode {
  const fields: StatusAndCode = {}
  if (from.status !== undefined) fields.status = from.status
  if (from.code !== undefined) fields.code = from.code
  return fields
}
