import type { Citation } from '@kode/protocol'

/** What a wire's citation says in Kode's terms, each read from wherever that wire puts it. */
export interface CitationSource {
  url?: unknown
  title?: unknown
  citedText?: unknown
}

/**
 * A provider's citation (`fields`, kept whole as sent, under `format`) with the fields Kode names
 * taken from `source`: each kept only when it is a string, whatever the server sent.
 */
export function citationOf(
  format: string,
  fields: Record<string, unknown>,
  source: CitationSource,
): Citation {
  const out: Citation = {}
  if (typeof source.url === 'string') out.url = source.url
  if (typeof source.title === 'string') out.title = source.title
  if (typeof source.citedText === 'string') out.citedText = source.citedText
  out.providerFields = { format, fields }
  return out
}

/** Whether `value` is a JSON object (what a citation, or the part of it naming its source, must be). */
export function isFieldObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
