/**
 * How a shown escape is set apart from the text around it (with colour: reverse video), so that it
 * cannot pass for the same characters written by the model.
 */
export type MarkEscape = (shown: string) => string

/**
 * What the terminal would show as nothing or as an ordinary space, or act on: every space but the
 * ASCII one (no-break and typographic spaces: a shell does not split words at them, so
 * `rm ./a<NBSP>b` reads as two arguments and is one), the braille blank (U+2800, drawn as a space
 * and not one), every control (newline included, for text that must stay on its line; tab too,
 * which reads as spaces), format characters (zero-width ones, the BOM, the soft hyphen, bidi
 * marks, tag characters), every other default-ignorable code point (variation selectors, Hangul
 * fillers), line and paragraph separators, private-use characters (a font draws them as anything,
 * an icon or nothing), lone surrogates and unassigned code points. First, the three flags written
 * with tag characters (England, Scotland, Wales): kept whole.
 */
const HIDDEN =
  /\u{1f3f4}\u{e0067}\u{e0062}(?:\u{e0065}\u{e006e}\u{e0067}|\u{e0073}\u{e0063}\u{e0074}|\u{e0077}\u{e006c}\u{e0073})\u{e007f}|\\|\p{Cc}|(?! )\p{Zs}|[\u2800\p{Cf}\p{Co}\p{Cs}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu

const NAMED: Record<string, string> = {
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\b': '\\b',
  '\f': '\\f',
  '\v': '\\v',
  '\0': '\\0',
}

const ZWJ = '\u200d'
const KEYCAP = '\u20e3'
const EMOJI_SELECTORS = new Set(['\ufe0e', '\ufe0f'])
/** An emoji: pictographic and assigned (an unassigned one is shown as an escape itself). */
const EMOJI = /^(?!\p{Cn})\p{Extended_Pictographic}$/u

/**
 * `text` with every hidden character shown as an escape (`\r`, `\x1b`, `\u200b`, `\u{e0041}`):
 * what an approval prompt shows, so that the user sees every character of what would run. The
 * model's own backslashes must not read as escapes: with `mark` the escapes are marked and those
 * backslashes stay as written; without it (no colour) those backslashes are shown doubled.
 *
 * Ordinary emoji stay readable: a zero-width joiner between two emoji, one emoji variation selector
 * (U+FE0E, U+FE0F) right after an emoji or in a keycap, and the tag flags of England, Scotland and
 * Wales are kept.
 * Each carries no text, so nothing can hide in them.
 */
export function revealHidden(text: string, mark?: MarkEscape): string {
  return text.replace(HIDDEN, (match: string, offset: number) => {
    if (match === '\\') return mark ? match : '\\\\'
    if (match.length > 2 || inEmoji(match, text, offset)) return match
    return escaped(match, mark)
  })
}

/**
 * A path as {@link revealHidden} shows it, with the spaces at its start and its end shown as
 * escapes too (`notes.txt\x20`): before ` (1 lines):` or at the end of a line they cannot be seen.
 * Spaces inside it stay: they are seen between the characters around them.
 */
export function revealPath(path: string, mark?: MarkEscape): string {
  const [, leading, middle, trailing] = /^( *)(.*?)( *)$/su.exec(path)!
  const spaces = (run: string) => [...run].map((space) => escaped(space, mark)).join('')
  return `${spaces(leading!)}${revealHidden(middle!, mark)}${spaces(trailing!)}`
}

function escaped(char: string, mark?: MarkEscape): string {
  const shown = escapeOf(char)
  return mark ? mark(shown) : shown
}

/** Whether `char` at `offset` is a joiner or a selector that an emoji sequence uses. */
function inEmoji(char: string, text: string, offset: number): boolean {
  const before = codePointBefore(text, offset)
  // After a digit, `#` or `*` only in a keycap (1️⃣): else a selector would hide in plain text.
  if (EMOJI_SELECTORS.has(char))
    return (
      before !== undefined && (EMOJI.test(before) || (/[0-9#*]/.test(before) && text[offset + 1] === KEYCAP))
    )
  if (char !== ZWJ) return false
  const after = String.fromCodePoint(text.codePointAt(offset + 1) ?? 0)
  if (!EMOJI.test(after) || before === undefined) return false
  if (EMOJI.test(before) || /\p{Emoji_Modifier}/u.test(before)) return true
  // An emoji with its selector: the selector was kept only after an emoji.
  return before === '\ufe0f' && EMOJI.test(codePointBefore(text, offset - 1) ?? '')
}

function codePointBefore(text: string, offset: number): string | undefined {
  if (offset <= 0) return undefined
  const low = text.charCodeAt(offset - 1)
  const high = offset >= 2 ? text.charCodeAt(offset - 2) : 0
  const isPair = low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff
  return isPair ? text.slice(offset - 2, offset) : text.slice(offset - 1, offset)
}

/** The JavaScript escape of one code point: `\r`, `\x1b`, `\u200b`, or `\u{e0041}` beyond the BMP. */
function escapeOf(char: string): string {
  const code = char.codePointAt(0)!
  const named = NAMED[char]
  if (named) return named
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`
  return `\\u{${code.toString(16)}}`
}
