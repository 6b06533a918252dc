import { describe, expect, test } from 'vitest'
import { lineReader } from '../../src/line-reader.js'

/** Feeds `chunks` to a reader limited to `max` bytes: the lines it read, and whether it stopped. */
function read(chunks: readonly (string | Uint8Array)[], max = Number.POSITIVE_INFINITY) {
  const lines: string[] = []
  let tooLarge = 0
  const push = lineReader({
    maxLineBytes: max,
    onLine: (line) => lines.push(line),
    onTooLarge: () => tooLarge++,
  })
  for (const chunk of chunks) push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  return { lines, tooLarge }
}

describe('lineReader', () => {
  test('splits on LF, whatever the chunks, and drops a CR before it', () => {
    expect(read(['{"a":1}\n{"b"', ':2}\r', '\n{"c":3}\n\n', 'rest']).lines).toEqual([
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
      '',
    ])
  })

  test('a character split across chunks is decoded whole', () => {
    const bytes = Buffer.from('"é€😀"\n')
    expect(read([...bytes].map((byte) => Uint8Array.of(byte))).lines).toEqual(['"é€😀"'])
  })

  test('a line of exactly the limit is read; one byte more stops the reader before the chunk is kept', () => {
    expect(read(['abcd', 'ef\n'], 6)).toEqual({ lines: ['abcdef'], tooLarge: 0 })
    expect(read(['abcd', 'efg', '\nnext\n'], 6)).toEqual({ lines: [], tooLarge: 1 })
  })

  test('the CR before the LF counts towards the limit, as the SDK keeps it until it parses', () => {
    expect(read(['abcdef\r\n'], 6)).toEqual({ lines: [], tooLarge: 1 })
  })

  test('after a line too long, nothing more is read', () => {
    expect(read(['ok\n', 'x'.repeat(10), 'y\n', 'ok again\n'], 8)).toEqual({ lines: ['ok'], tooLarge: 1 })
  })

  test('a long line in many chunks is joined once', () => {
    const chunk = Buffer.alloc(64 * 1024, 'a')
    const chunks = Array.from({ length: 256 }, () => chunk)
    const { lines } = read([...chunks, '\n'])
    expect(lines).toHaveLength(1)
    expect(lines[0]).toHaveLength(256 * 64 * 1024)
  })
})

describe('lineReader, several lines in one chunk', () => {
  test('CRLF lines in one chunk, and a line ended in the next', () => {
    expect(read(['{"a":1}\r\n{"b":2}\r\n{"c"', ':3}\r\n']).lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}'])
  })

  test('a chunk whose later line is too long is refused whole: none of its lines is read', () => {
    expect(read(['ok\n', 'fine\nxxxxxxxxxx\n', 'after\n'], 8)).toEqual({ lines: ['ok'], tooLarge: 1 })
  })
})
