import type { Citation, ImagePart, ProviderFields, StopDetails, StopReason, Usage } from '@kode/protocol'
import { USAGE_KEYS } from '@kode/protocol/helpers'

// What a value from the server must be to count. Adapters pass on what the server sent, and a
// broken or hostile server sends any type anywhere: the accumulator checks every value with
// these, once for all adapters, so the final message always fits the history schema.

/** A non-empty string: what every id, name and delta must be to count. */
export function isText(value: unknown): value is string {
  return typeof value === 'string' && value !== ''
}

/** A format name and at least one field, as the history schema takes them. */
export function isProviderFields(value: ProviderFields): boolean {
  if (typeof value !== 'object' || value === null || !isText(value.format)) return false
  const { fields } = value
  return (
    typeof fields === 'object' && fields !== null && !Array.isArray(fields) && Object.keys(fields).length > 0
  )
}

/** Absent, or a string. */
export function optionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string'
}

/** The history schema's rules for images (see ImageUrlPart, ImageFilePart). */
export function isImage(part: ImagePart): boolean {
  if (part.type === 'image_url') return typeof part.url === 'string' && /^(https?:|data:)/.test(part.url)
  return (
    part.type === 'image_file' &&
    typeof part.path === 'string' &&
    part.path !== '' &&
    typeof part.mimeType === 'string' &&
    part.mimeType.startsWith('image/')
  )
}

/**
 * The counts of `usage` the history schema takes (non-negative integers); a count of another type,
 * or beyond `Number.MAX_SAFE_INTEGER` (what adding up absurd counts makes), counts as not reported. `undefined` when none is left: no usage rather than an empty one.
 */
export function checkedUsage(usage: unknown): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined
  const out: Usage = {}
  let any = false
  for (const key of USAGE_KEYS) {
    const value = (usage as Record<string, unknown>)[key]
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
      out[key] = value
      any = true
    }
  }
  return any ? out : undefined
}

/** The text fields of `details`; `undefined` when none is left. */
export function checkedStopDetails(details: unknown): StopDetails | undefined {
  if (typeof details !== 'object' || details === null) return undefined
  const { category, explanation } = details as Record<string, unknown>
  const out: StopDetails = {}
  if (typeof category === 'string') out.category = category
  if (typeof explanation === 'string') out.explanation = explanation
  return out.category === undefined && out.explanation === undefined ? undefined : out
}

/**
 * A citation with only the fields the history schema takes, each of its type; `undefined` for a
 * value that is no object, or has nothing left.
 */
export function checkedCitation(citation: unknown): Citation | undefined {
  if (typeof citation !== 'object' || citation === null || Array.isArray(citation)) return undefined
  const { url, title, citedText, providerFields } = citation as Record<string, unknown>
  const out: Citation = {}
  if (typeof url === 'string') out.url = url
  if (typeof title === 'string') out.title = title
  if (typeof citedText === 'string') out.citedText = citedText
  if (isProviderFields(providerFields as ProviderFields)) {
    const { format, fields } = providerFields as ProviderFields
    out.providerFields = { format, fields: { ...fields } }
  }
  return Object.keys(out).length > 0 ? out : undefined
}

const STOP_REASONS: ReadonlySet<unknown> = new Set<StopReason>([
  'stop',
  'length',
  'tool_use',
  'error',
  'aborted',
])

/** One of Kode's stop reasons; anything else maps to none. */
export function isStopReason(value: unknown): value is StopReason {
  return STOP_REASONS.has(value)
}
