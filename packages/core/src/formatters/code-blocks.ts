/** A fenced code block of a Markdown text. */
export interface CodeBlock {
  /** The first word of the fence's info string, lower-cased (`python` for ```` ```Python title ````); `''` without one. */
  language: string
  /** The lines between the fences. */
  code: string
  /** False when the text ended before the closing fence. */
  closed: boolean
  /** Offset of the opening fence line. */
  start: number
  /** Offset just after the closing fence line (the end of the text when unclosed). */
  end: number
}

const OPENING = /^( {0,3})(`{3,}|~{3,})([^\n]*)$/
const CLOSING = /^ {0,3}(`{3,}|~{3,})[ \t]*$/

/**
 * The fenced code blocks of `text`, in order, as CommonMark reads them: a fence is three or more
 * backticks or tildes at the start of a line, and a block closes at a line holding only a fence
 * of the same character that is at least as long; up to the opening fence's indentation is removed
 * from each line. Lines end at `\n` or `\r\n` (the code is given with `\n`). A block the text
 * leaves open runs to its end.
 */
export function parseCodeBlocks(text: string): CodeBlock[] {
  const blocks: CodeBlock[] = []
  let open: { fence: string; indent: number; language: string; start: number; lines: string[] } | undefined
  let offset = 0
  for (const raw of text.split('\n')) {
    const lineStart = offset
    offset += raw.length + 1
    // A CRLF line ending is a line ending too (CommonMark): without this a closing fence followed
    // by `\r` would not close its block, which would swallow the rest of the response.
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (!open) {
      const opening = OPENING.exec(line)
      // A backtick fence's info string cannot hold a backtick (that is inline code).
      if (!opening || (opening[2]![0] === '`' && opening[3]!.includes('`'))) continue
      const language = opening[3]!.trim().split(/\s+/, 1)[0]!.toLowerCase()
      open = { fence: opening[2]!, indent: opening[1]!.length, language, start: lineStart, lines: [] }
      continue
    }
    const closing = CLOSING.exec(line)
    if (closing && closing[1]![0] === open.fence[0] && closing[1]!.length >= open.fence.length) {
      const end = Math.min(offset, text.length)
      blocks.push({
        language: open.language,
        code: open.lines.join('\n'),
        closed: true,
        start: open.start,
        end,
      })
      open = undefined
    } else open.lines.push(unindented(line, open.indent))
  }
  if (open) {
    const code = open.lines.join('\n')
    blocks.push({ language: open.language, code, closed: false, start: open.start, end: text.length })
  }
  return blocks
}

/**
 * A line of a block whose opening fence was indented `indent` spaces (inside a list item, say):
 * up to that many leading spaces are removed, as CommonMark does, so the code runs as written.
 */
function unindented(line: string, indent: number): string {
  let spaces = 0
  while (spaces < indent && line[spaces] === ' ') spaces++
  return spaces === 0 ? line : line.slice(spaces)
}
