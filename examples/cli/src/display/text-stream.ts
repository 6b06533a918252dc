/** One line of assistant markdown, classified by whether it sits inside a fenced code block. */
export interface MarkdownLine {
  /** `fence`: a ``` line; `code`: a line inside a fenced block; `prose`: anything else. */
  kind: 'prose' | 'code' | 'fence'
  text: string
  /** The language of the block a `fence` line opens. */
  lang?: string
}

const FENCE = /^\s*(```|~~~)\s*([\w+-]*)/

/**
 * Splits streamed markdown into complete lines as deltas arrive, tracking fenced code blocks
 * across lines; the incomplete last line is kept as `partial` until its newline (or `end`).
 */
export class TextStream {
  #partial = ''
  #fence: string | undefined

  /** The open line, not yet ended by a newline. */
  get partial(): string {
    return this.#partial
  }

  /** Adds a delta; returns the lines it completed. */
  push(delta: string): MarkdownLine[] {
    const pieces = (this.#partial + delta).split(/\r?\n/)
    this.#partial = pieces.pop()!
    return pieces.map((text) => this.#classify(text))
  }

  /** Ends the stream: the open line, if any, as a last line. */
  end(): MarkdownLine[] {
    const rest = this.#partial
    this.#partial = ''
    return rest === '' ? [] : [this.#classify(rest)]
  }

  #classify(text: string): MarkdownLine {
    const fence = FENCE.exec(text)
    if (this.#fence !== undefined) {
      if (fence && fence[1] === this.#fence && fence[2] === '') {
        this.#fence = undefined
        return { kind: 'fence', text }
      }
      return { kind: 'code', text }
    }
    if (fence) {
      this.#fence = fence[1]
      return fence[2] ? { kind: 'fence', text, lang: fence[2] } : { kind: 'fence', text }
    }
    return { kind: 'prose', text }
  }
}

/** A whole text as markdown lines (what replay shows for a response's final content). */
export function markdownLines(text: string): MarkdownLine[] {
  const stream = new TextStream()
  return [...stream.push(text), ...stream.end()]
}
