/**
 * The delay a Google error body asks for (Gemini, Vertex AI), which sends no `Retry-After` header:
 * the `retryDelay` of a `google.rpc.RetryInfo` entry in `error.details`, a protobuf Duration in
 * JSON (`"58s"`, `"0.5s"`), in milliseconds. `undefined` when the body holds none or it is unreadable.
 */
export function retryInfoDelayMs(error: Record<string, unknown>): number | undefined {
  const details = error.details
  if (!Array.isArray(details)) return undefined
  for (const detail of details) {
    if (typeof detail !== 'object' || detail === null) continue
    const { '@type': type, retryDelay } = detail as Record<string, unknown>
    if (typeof type !== 'string' || !type.endsWith('google.rpc.RetryInfo')) continue
    if (typeof retryDelay !== 'string' || !DURATION.test(retryDelay)) return undefined
    return Math.round(Number.parseFloat(retryDelay) * 1000)
  }
  return undefined
}

const DURATION = /^\d+(?:\.\d+)?s$/
