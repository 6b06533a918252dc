/**
 * `text` cut to at most `max` UTF-16 units, the cut marked with `…` (which takes one of them).
 * The cut never keeps half of a surrogate pair (an emoji): alone, that half is not text, and it
 * is written as U+FFFD. A `max` below 1 leaves no room even for the mark: the result is empty.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text
  if (!(max >= 1)) return ''
  let end = Math.floor(max) - 1
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return `${text.slice(0, end)}…`
}
