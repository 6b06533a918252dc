/**
 * The one rule for text kode did not write itself (the model's, a tool's, a file's, a server's)
 * on its way to the terminal: it must not drive the terminal. Removed are the C0
 * controls but tab and newline (ESC, so every escape sequence; CR and backspace, which overwrite),
 * DEL, the C1 controls (U+0080–U+009F: a terminal may take U+009B as an escape sequence), and the
 * Unicode marks that reorder text (bidi overrides, embeddings, isolates and direction marks).
 * An approval prompt shows them instead, with every other invisible character (`reveal.ts`).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/** `text` without the characters that could drive the terminal or reorder what it shows. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, '')
}

// What JSON.stringify leaves as it is: DEL, C1 controls, bidi marks, line and paragraph separators.
const JSON_UNSAFE = /[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/**
 * A line of JSON with those characters written as `\uXXXX` escapes: the same JSON value, and
 * nothing in it a terminal acts on. (They can only stand inside strings, where the escape is valid.)
 */
export function jsonTerminalSafe(json: string): string {
  return json.replace(JSON_UNSAFE, (char) => `\\u${hex(char.charCodeAt(0), 4)}`)
}

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, '0')
}
