// Explicit bidi formatting characters: embeddings and overrides (LRE, RLE, LRO, RLO) close with PDF;
// isolates (LRI, RLI, FSI) close with PDI.
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/
// Those, and the control characters, among which are the paragraph separators of the Unicode bidi
// algorithm (with U+2029), each of which ends every embedding and isolate open.
const BIDI_OR_CONTROL = /[\u202a-\u202e\u2066-\u2069\u2029]|\p{Cc}/gu
const PARAGRAPH = new Set([0x0a, 0x0d, 0x1c, 0x1d, 0x1e, 0x85, 0x2029])
const PDF = '\u202c'
const PDI = '\u2069'

/**
 * `text` with the bidi embeddings, overrides and isolates it leaves open closed at its end, so it
 * reorders only itself: an unclosed RLO in a tool's name would otherwise show the arguments after
 * it in an approval notice reversed (an inline element does not stop it, only the end of a block).
 * Text without such characters, or with each closed, is returned as it is.
 *
 * Whether a newline ends them depends on how the text is laid out (it does where white space is
 * kept, not where it collapses to a space), so the closers cover both readings; a closer with
 * nothing left to close is ignored.
 */
export function closeBidi(text: string): string {
  if (!BIDI_CONTROL.test(text)) return text
  const whole = new BidiStack()
  const paragraph = new BidiStack()
  for (const [char] of text.matchAll(BIDI_OR_CONTROL)) {
    if (PARAGRAPH.has(char.charCodeAt(0))) paragraph.clear()
    else paragraph.take(char)
    whole.take(char)
  }
  // A PDI closes the nearest isolate and every embedding inside it, and a PDF closes no embedding
  // outside an isolate still open: the isolates first, then the embeddings left.
  const isolates = Math.max(whole.isolates(), paragraph.isolates())
  const embeddings = Math.max(whole.embeddings(), paragraph.embeddings())
  return text + PDI.repeat(isolates) + PDF.repeat(embeddings)
}

/** The embeddings and isolates open, as the bidi algorithm matches their closers (rules X1-X8). */
class BidiStack {
  #open: ('embedding' | 'isolate')[] = []

  take(char: string): void {
    switch (char) {
      case '\u202a':
      case '\u202b':
      case '\u202d':
      case '\u202e':
        this.#open.push('embedding')
        break
      case '\u2066':
      case '\u2067':
      case '\u2068':
        this.#open.push('isolate')
        break
      case PDF:
        // Closes the innermost embedding, unless an isolate is open inside it.
        if (this.#open.at(-1) === 'embedding') this.#open.pop()
        break
      case PDI: {
        // Closes the innermost isolate and everything opened inside it; none open: ignored.
        const at = this.#open.lastIndexOf('isolate')
        if (at !== -1) this.#open.length = at
        break
      }
    }
  }

  clear(): void {
    this.#open = []
  }

  isolates(): number {
    return this.#open.filter((kind) => kind === 'isolate').length
  }

  embeddings(): number {
    return this.#open.filter((kind) => kind === 'embedding').length
  }
}
