import { cutText, graphemeBoundary } from '@kode/protocol'

/**
 * Caps a tool's output text at `limit` characters so one tool cannot fill the model's context.
 * Longer text keeps its head and its tail (where errors and summaries usually are) around a marker
 * saying how many characters were cut (a limit too small for the marker keeps the head, ending in
 * `…`). Never splits what shows as one character (a surrogate pair, a flag, a family emoji, a
 * letter and its accent): only the text around the two cuts is read for it, so a 10 MB output
 * costs no more than a short one. `Infinity` disables the cap.
 */
export function capOutput(text: string, limit: number): string {
  if (text.length <= limit) return text
  // The marker's own length depends on the count it prints; reserve room for the longest.
  const longest = markerFor(text.length).length
  // A limit with no room for the marker keeps the head alone, so the result still fits.
  if (limit <= longest) return cutText(text, limit)
  const room = limit - longest
  const head = Math.ceil(room / 2)
  // Each cut moves inward to a grapheme boundary, so the result only gets shorter.
  const headEnd = graphemeBoundary(text, head, 'before')
  const tailStart = graphemeBoundary(text, text.length - (room - head), 'after')
  return text.slice(0, headEnd) + markerFor(tailStart - headEnd) + text.slice(tailStart)
}

function markerFor(cut: number): string {
  return `\n\n[… ${cut} characters cut from the middle of this output …]\n\n`
}
