/**
 * How far around the cut graphemes are read. A grapheme (what shows as one character) longer than
 * this across the cut is rare (a family emoji takes 11 units); there the surrogate rule decides.
 */
const GRAPHEME_WINDOW = 64

/**
 * `text` cut to at most `max` UTF-16 units, the cut marked with `…` (which takes one of them).
 * The cut never keeps part of a character: half of a surrogate pair (alone, it is not text, and
 * it is written as U+FFFD), nor part of an emoji made of several (a flag, a skin tone, a family,
 * a keycap) or a letter with its accent. A `max` below 1 leaves no room even for the mark: the
 * result is empty.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text
  if (!(max >= 1)) return ''
  return `${text.slice(0, cutPoint(text, Math.floor(max) - 1))}…`
}

/** Where a cut at or before `end` ends without splitting a grapheme: the start of the one at `end`. */
function cutPoint(text: string, end: number): number {
  // Intl.Segmenter is absent in some runtimes (older browsers, Node without ICU).
  const Segmenter = typeof Intl === 'object' ? Intl.Segmenter : undefined
  if (typeof Segmenter === 'function') {
    const from = Math.max(0, end - GRAPHEME_WINDOW)
    const around = text.slice(from, end + GRAPHEME_WINDOW)
    const at = new Segmenter(undefined, { granularity: 'grapheme' }).segment(around).containing(end - from)
    // At the window's start, the grapheme may have begun before it: the window cannot tell.
    if (at !== undefined && (at.index > 0 || from === 0)) return from + at.index
  }
  const last = text.charCodeAt(end - 1)
  return last >= 0xd800 && last <= 0xdbff ? end - 1 : end
}
