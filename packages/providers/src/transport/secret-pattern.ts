/**
 * Matches `secret` in every spelling a server may echo it back in, so `redact` can remove it.
 * Each character of the key may appear:
 * - raw;
 * - percent-encoded (its UTF-8 bytes as `%XX`, either hex case; `%25XX` when encoded twice).
 *   Encoders escape different sets (`encodeURIComponent` leaves `!'()*~` raw, form encoding
 *   escapes `!'()~`, strict RFC 3986 escapes `!'()*`, a URL parser fewer), and escaping any
 *   character is legal, so any may be;
 * - JSON-escaped (`\uXXXX` in either hex case; `\/`, as PHP's `json_encode` writes a slash);
 * - for a space, `+` (form encoding, also as `%2B` when encoded again); for a `+`, a space in any spelling (a form decoder that
 *   read a raw `+` in a query as a space).
 * Spellings may mix within one echo, as when a server re-encodes part of what it received.
 */
export function secretPattern(secret: string): RegExp {
  let source = ''
  for (const char of secret) {
    const spellings = char === '+' ? [...spellingsOf(char), ...spellingsOf(' ')] : spellingsOf(char)
    source += `(?:${spellings.join('|')})`
  }
  return new RegExp(source, 'g')
}

/** The regexp sources of the ways one character (one code point) may be written. */
function spellingsOf(char: string): string[] {
  const out = [escapeRegExp(char)]
  // A lone surrogate has no UTF-8 form, so no URL carries it percent-encoded.
  if (!/^[\uD800-\uDFFF]$/.test(char)) {
    // `%25XX`: encoded twice, as a URL carried inside another URL's query is.
    const bytes = [...new TextEncoder().encode(char)]
    out.push(hexEitherCase(bytes.map((byte) => `(?:%|%25)${hex(byte, 2)}`).join('')))
  }
  const json = [...Array(char.length).keys()].map((i) => `\\u${hex(char.charCodeAt(i), 4)}`).join('')
  out.push(hexEitherCase(escapeRegExp(json)))
  if (char === '/' || char === '"' || char === '\\') out.push(escapeRegExp(`\\${char}`))
  // Form encoding's `+`, and that `+` percent-encoded once more.
  if (char === ' ') out.push('\\+', '%2[Bb]')
  return out
}

function hex(value: number, digits: number): string {
  return value.toString(16).toUpperCase().padStart(digits, '0')
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
}

/** `%2F` -> `%2[Ff]`: each hex letter of an escape in either case. */
function hexEitherCase(escaped: string): string {
  return escaped.replace(/[A-F]/g, (letter) => `[${letter}${letter.toLowerCase()}]`)
}
