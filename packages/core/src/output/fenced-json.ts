// The opening: ``` (optionally `json`), blanks, the end of its line. The closing: a line that starts
// (after blanks) with ```. Neither pattern can match its text in more than one way, and each is
// searched for once, so a text is read in one pass (a single pattern with a lazy body between two
// runs of `\s*` backtracked in time cubic in the length of a text of newlines).
const OPENING = /```(?:json)?[^\S\n]*\n/

/**
 * What the first fenced block of `text` that opens with ```` ``` ```` or ```` ```json ```` holds,
 * up to the next line that starts with ```` ``` ````; `undefined` without one. A block that never
 * closes is none: a later opening could not close either.
 */
export function fencedJson(text: string): string | undefined {
  const opening = OPENING.exec(text)
  if (!opening) return undefined
  const start = opening.index + opening[0].length
  // The body's own first line is never the closing line: the body runs to a newline of its own.
  const closing = /\n[^\S\n]*```/g
  closing.lastIndex = start
  const close = closing.exec(text)
  return close ? text.slice(start, close.index) : undefined
}
