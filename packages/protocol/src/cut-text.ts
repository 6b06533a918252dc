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
  return `${text.slice(0, graphemeBoundary(text, Math.floor(max) - 1, 'before'))}…`
}

/**
 * The grapheme boundary (a place between what shows as one character and the next) nearest to
 * UTF-16 index `at` in `text`: at or `before` it, or at or `after` it. Only the graphemes around
 * `at` are read, so it costs the same on 10 MB of text as on 100 characters. A cut there never
 * splits a surrogate pair, a flag, a skin tone, a family emoji or a letter and its accent.
 */
export function graphemeBoundary(text: string, at: number, toward: 'before' | 'after'): number {
  if (at <= 0) return 0
  if (at >= text.length) return text.length
  // Intl.Segmenter is absent in some runtimes (older browsers, Node without ICU).
  const Segmenter = typeof Intl === 'object' ? Intl.Segmenter : undefined
  if (typeof Segmenter === 'function') {
    const from = pairedStart(text, Math.max(0, at - GRAPHEME_WINDOW))
    const to = Math.min(text.length, at + GRAPHEME_WINDOW)
    const around = text.slice(from, to)
    const found = new Segmenter(undefined, { granularity: 'grapheme' }).segment(around).containing(at - from)
    if (found !== undefined) {
      const start = from + found.index
      const end = start + found.segment.length
      // At the window's edges, the grapheme may go on beyond it: the window cannot tell.
      if (start === at) return at
      if (toward === 'before' && (found.index > 0 || from === 0)) return start
      if (toward === 'after' && (end < to || to === text.length)) return end
    }
  }
  // Without graphemes, the surrogate rule: no half of a pair on either side.
  if (toward === 'before') return isHighSurrogate(text.charCodeAt(at - 1)) ? at - 1 : at
  return isLowSurrogate(text.charCodeAt(at)) ? at + 1 : at
}

/**
 * `from`, or the regional indicator before it when `from` splits a flag: flags pair their
 * indicators from the start of a run of them, which a window starting inside the run cannot see,
 * so the indicators before it are counted (a char code check each, even for a long run).
 */
function pairedStart(text: string, start: number): number {
  // Not inside a surrogate pair either.
  const from = isLowSurrogate(text.charCodeAt(start)) ? start - 1 : start
  let before = 0
  for (let i = from; i >= 2 && isRegionalIndicator(text, i - 2); i -= 2) before++
  return before % 2 === 1 ? from - 2 : from
}

/** Whether a regional indicator (U+1F1E6 to U+1F1FF, a surrogate pair) starts at `i`. */
function isRegionalIndicator(text: string, i: number): boolean {
  return text.charCodeAt(i) === 0xd83c && text.charCodeAt(i + 1) >= 0xdde6 && text.charCodeAt(i + 1) <= 0xddff
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff
