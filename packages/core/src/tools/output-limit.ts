import { cutText } from '@kode/protocol'

/**
 * Caps a tool's output text at `limit` characters so one tool cannot fill the model's context.
 * Longer text keeps its head and its tail (where errors and summaries usually are) around a marker
 * saying how many characters were cut (a limit too small for the marker keeps the head, ending in
 * `…`). Never splits a surrogate pair. `Infinity` disables the cap.
 */
export function capOutput(text: string, limit: number): string {
  if (text.length <= limit) return text
  // The marker's own length depends on the count it prints; reserve room for the longest.
  const longest = markerFor(text.length).length
  // A limit with no room for the marker keeps the head alone, so the result still fits.
  if (limit <= longest) return cutText(text, limit)
  const room = limit - longest
  let head = Math.ceil(room / 2)
  let tailStart = text.length - (room - head)
  if (isLowSurrogate(text.charCodeAt(head)) && head > 0) head--
  if (isLowSurrogate(text.charCodeAt(tailStart)) && tailStart < text.length) tailStart++
  return text.slice(0, head) + markerFor(tailStart - head) + text.slice(tailStart)
}

function markerFor(cut: number): string {
  return `\n\n[… ${cut} characters cut from the middle of this output …]\n\n`
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}
