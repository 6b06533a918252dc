import { CodecError, describeThrown } from './codec-error.js'

/**
 * `JSON.parse(line)`, with invalid JSON a `CodecError` whose cause is the `SyntaxError`. A line
 * that starts with a byte order mark (an editor may add one; Kode never writes it) is named so:
 * JSON.parse would call it an unexpected character, which no terminal shows.
 */
export function parseLine(line: string): unknown {
  try {
    return JSON.parse(line)
  } catch (cause) {
    const detail = startsWithByteOrderMark(line)
      ? 'the line starts with a byte order mark, U+FEFF, which Kode never writes: remove it'
      : describeThrown(cause)
    throw new CodecError('', 'a JSON object', { cause, detail })
  }
}

/** Whether `line` begins with U+FEFF, as a file an editor saved with a byte order mark does. */
function startsWithByteOrderMark(line: string): boolean {
  return typeof line === 'string' && line.charCodeAt(0) === 0xfeff
}
