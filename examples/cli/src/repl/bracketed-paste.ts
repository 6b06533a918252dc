import { Transform } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'

/** Asks the terminal to mark what is pasted (bracketed paste mode), and to stop. */
export const BRACKETED_PASTE_ON = '\x1b[?2004h'
export const BRACKETED_PASTE_OFF = '\x1b[?2004l'

const START = '\x1b[200~'
const END = '\x1b[201~'

/**
 * Stands for a line break inside a paste while it sits in the prompt's one line (readline ends a
 * line at every break); `restorePastedBreaks` turns it back into `\n`.
 */
export const PASTED_BREAK = '\u21b5'

/** The line the user entered, with the line breaks of what they pasted. */
export function restorePastedBreaks(line: string): string {
  return line.replaceAll(PASTED_BREAK, '\n')
}

/** Terminal input as readline needs it: a readable that can be put in raw mode. */
export type TerminalInput = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown }

/**
 * `input` with each bracketed paste's line breaks turned into {@link PASTED_BREAK} and its markers
 * dropped, so a pasted block (a stack trace, a snippet) is one prompt instead of a prompt per
 * line. Everything typed passes as it is. The terminal marks pastes only after
 * {@link BRACKETED_PASTE_ON}.
 */
export function joinPastedLines(input: TerminalInput): TerminalInput {
  const decoder = new StringDecoder('utf8')
  let pasting = false
  // The end of a chunk that may be the start of a marker the next chunk finishes.
  let held = ''
  const convert = (text: string): string => {
    let out = ''
    let rest = held + text
    held = ''
    for (;;) {
      const marker = pasting ? END : START
      const at = rest.indexOf(marker)
      if (at === -1) {
        const keep = partialMarkerAtEnd(rest, marker)
        held = rest.slice(rest.length - keep)
        const passed = rest.slice(0, rest.length - keep)
        return out + (pasting ? passed.replace(/\r\n|\r|\n/g, PASTED_BREAK) : passed)
      }
      const before = rest.slice(0, at)
      out += pasting ? before.replace(/\r\n|\r|\n/g, PASTED_BREAK) : before
      rest = rest.slice(at + marker.length)
      pasting = !pasting
    }
  }
  const joined = new Transform({
    transform(chunk: Buffer | string, _encoding, done) {
      done(null, convert(typeof chunk === 'string' ? chunk : decoder.write(chunk)))
    },
    flush(done) {
      done(null, convert(decoder.end()) + held)
    },
  })
  input.pipe(joined)
  // A pipe does not pass errors on: the terminal going away (EIO) must still reach readline, which
  // reports it as end of input. Once readline has let go (its own close can fail so, in
  // setRawMode), the terminal is gone anyway: nothing is left to tell.
  input.on('error', (error) => {
    if (joined.listenerCount('error') > 0) joined.emit('error', error)
  })
  // readline puts a terminal in raw mode through its input.
  return Object.assign(joined, {
    isTTY: input.isTTY,
    setRawMode: (mode: boolean) => input.setRawMode?.(mode),
  })
}

/** How many characters at the end of `text` are a proper beginning of `marker`. */
function partialMarkerAtEnd(text: string, marker: string): number {
  for (let length = Math.min(marker.length - 1, text.length); length > 0; length--)
    if (text.endsWith(marker.slice(0, length))) return length
  return 0
}
