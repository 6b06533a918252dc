import { revealHidden } from '../../../cli/src/display/reveal.js'

// Where a shown escape starts and ends in `revealHidden`'s output. Every control character of the
// text itself comes out as an escape, so these two can only be the marks put there below.
const OPEN = '\u0001'
const CLOSE = '\u0002'

/**
 * `text` as nodes, each character that would show as nothing, as a space, or reorder what is
 * around it (a bidi override, a zero-width space) shown as its escape (`\u202e`) in a
 * `<span class="escape">`, by the CLI's rule for what an approval shows (`reveal.ts`): what the
 * user approves is what they read. The text's own backslashes stay as written; only a marked
 * escape is one.
 */
export function revealedNodes(text: string, doc: Document): Node[] {
  const shown = revealHidden(text, (shownEscape) => `${OPEN}${shownEscape}${CLOSE}`)
  return shown.split(OPEN).flatMap((piece, i) => {
    if (i === 0) return piece === '' ? [] : [doc.createTextNode(piece)]
    const [shownEscape, rest] = piece.split(CLOSE) as [string, string]
    const span = doc.createElement('span')
    span.className = 'escape'
    span.textContent = shownEscape
    return rest === '' ? [span] : [span, doc.createTextNode(rest)]
  })
}
