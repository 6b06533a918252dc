import type { ImagePart, ProviderFields } from '@kode/protocol'

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
