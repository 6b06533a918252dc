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

function charWidth(code: number): number {
  if (code < 0x20 || (code >= 0x7f && code < 0xa0) || (code >= 0x300 && code < 0x370) || code === 0x200d)
    return 0
  if (
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
