/** Text styles for the terminal; with colour off every style returns its text unchanged. */
export interface Style {
  readonly color: boolean
  bold(text: string): string
  dim(text: string): string
  italic(text: string): string
  underline(text: string): string
  /** Reverse video: foreground and background swapped. */
  inverse(text: string): string
  red(text: string): string
  green(text: string): string
  yellow(text: string): string
  blue(text: string): string
  magenta(text: string): string
  cyan(text: string): string
  gray(text: string): string
  /** One of the sub-agent colours, by index (wraps around). */
  accent(index: number, text: string): string
}

/** Whether `stream` is a terminal that can redraw: a TTY whose `TERM` is not `dumb`. */
export function isLive(stream: { isTTY?: boolean }, env: { TERM?: string }): boolean {
  return Boolean(stream.isTTY) && env.TERM !== 'dumb'
}

/**
 * Whether what is written to `stream` is coloured: `FORCE_COLOR` (but `0`) says yes whatever the
 * stream, `NO_COLOR` says no; otherwise only a live terminal gets colour. Asked of the stream the
 * text goes to: `kode exec > file` still asks its questions on the terminal (stderr), in colour.
 */
export function colorFor(
  stream: { isTTY?: boolean },
  env: { TERM?: string; NO_COLOR?: string; FORCE_COLOR?: string },
): boolean {
  return env.FORCE_COLOR ? env.FORCE_COLOR !== '0' : isLive(stream, env) && !env.NO_COLOR
}

const sgr = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`
const ACCENTS = [36, 35, 33, 32, 34, 31] // cyan, magenta, yellow, green, blue, red

/** ANSI styles (SGR codes), or plain text when `color` is false. */
export function createStyle(color: boolean): Style {
  if (!color) {
    const plain = (text: string) => text
    return {
      color,
      bold: plain,
      dim: plain,
      italic: plain,
      underline: plain,
      inverse: plain,
      red: plain,
      green: plain,
      yellow: plain,
      blue: plain,
      magenta: plain,
      cyan: plain,
      gray: plain,
      accent: (_index, text) => text,
    }
  }
  return {
    color,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    italic: sgr(3, 23),
    underline: sgr(4, 24),
    inverse: sgr(7, 27),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    magenta: sgr(35, 39),
    cyan: sgr(36, 39),
    gray: sgr(90, 39),
    accent: (index, text) => sgr(ACCENTS[index % ACCENTS.length]!, 39)(text),
  }
}

// CSI sequences (colours, cursor moves) and OSC sequences (titles, links).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g

/** `text` without escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '')
}

/** Columns `text` takes in a terminal: escape sequences take none, wide (CJK, emoji) characters two. */
export function visibleWidth(text: string): number {
  let width = 0
  for (const char of stripAnsi(text)) width += charWidth(char.codePointAt(0)!)
  return width
}

/** Cuts `text` (plain, no escapes) to at most `columns` columns, marking a cut with `…`. */
export function truncateToWidth(text: string, columns: number): string {
  if (visibleWidth(text) <= columns) return text
  let out = ''
  let width = 0
  for (const char of text) {
    const w = charWidth(char.codePointAt(0)!)
    if (width + w > columns - 1) break
    out += char
    width += w
  }
  return `${out}…`
}

/**
 * `text` (plain, one line) with each tab replaced by the spaces a terminal moves over to reach its
 * next tab stop (every `tabSize` columns from the start): a tab is as wide as where it stands, so
 * a width can only be counted, or a line cut, once it is spaces.
 */
export function expandTabs(text: string, tabSize = 8): string {
  if (!text.includes('\t')) return text
  let out = ''
  let column = 0
  for (const char of text) {
    if (char === '\t') {
      const spaces = tabSize - (column % tabSize)
      out += ' '.repeat(spaces)
      column += spaces
    } else {
      out += char
      column += charWidth(char.codePointAt(0)!)
    }
  }
  return out
}

/**
 * The emoji below U+1F300 that terminals draw two columns wide (East Asian Width "W"), as
 * `[first, last]` ranges: models write ✅, ❌ and ⭐ often, and counting them one column would
 * let a live line wrap.
 */
const WIDE_SYMBOLS: readonly (readonly [number, number])[] = [
  [0x231a, 0x231b],
  [0x2329, 0x232a],
  [0x23e9, 0x23ec],
  [0x23f0, 0x23f0],
  [0x23f3, 0x23f3],
  [0x25fd, 0x25fe],
  [0x2614, 0x2615],
  [0x2648, 0x2653],
  [0x267f, 0x267f],
  [0x2693, 0x2693],
  [0x26a1, 0x26a1],
  [0x26aa, 0x26ab],
  [0x26bd, 0x26be],
  [0x26c4, 0x26c5],
  [0x26ce, 0x26ce],
  [0x26d4, 0x26d4],
  [0x26ea, 0x26ea],
  [0x26f2, 0x26f3],
  [0x26f5, 0x26f5],
  [0x26fa, 0x26fa],
  [0x26fd, 0x26fd],
  [0x2705, 0x2705],
  [0x270a, 0x270b],
  [0x2728, 0x2728],
  [0x274c, 0x274c],
  [0x274e, 0x274e],
  [0x2753, 0x2755],
  [0x2757, 0x2757],
  [0x2795, 0x2797],
  [0x27b0, 0x27b0],
  [0x27bf, 0x27bf],
  [0x2b1b, 0x2b1c],
  [0x2b50, 0x2b50],
  [0x2b55, 0x2b55],
  [0x1f004, 0x1f004],
  [0x1f0cf, 0x1f0cf],
  [0x1f18e, 0x1f18e],
  [0x1f191, 0x1f19a],
  [0x1f200, 0x1f2ff],
]

function charWidth(code: number): number {
  if (code < 0x20 || (code >= 0x7f && code < 0xa0) || (code >= 0x300 && code < 0x370) || code === 0x200d)
    return 0
  if (
    WIDE_SYMBOLS.some(([first, last]) => code >= first && code <= last) ||
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  )
    return 2
  return 1
}
