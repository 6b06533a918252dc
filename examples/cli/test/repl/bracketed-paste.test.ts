import { PassThrough } from 'node:stream'
import { describe, expect, test } from 'vitest'
import { joinPastedLines, PASTED_BREAK, restorePastedBreaks } from '../../src/repl/bracketed-paste.js'

/** What `joinPastedLines` makes of `chunks`, written one by one. */
async function joined(chunks: (string | Buffer)[]): Promise<string> {
  const input = new PassThrough()
  const output = joinPastedLines(input)
  let text = ''
  output.on('data', (chunk) => {
    text += String(chunk)
  })
  const ended = new Promise((resolve) => output.on('end', resolve))
  for (const chunk of chunks) input.write(chunk)
  input.end()
  await ended
  return text
}

describe('joinPastedLines', () => {
  test("a paste's line breaks become one line; typed ones stay", async () => {
    expect(await joined(['ab\r\x1b[200~x\r\ny\rz\n\x1b[201~\r'])).toBe(
      `ab\rx${PASTED_BREAK}y${PASTED_BREAK}z${PASTED_BREAK}\r`,
    )
  })

  test('markers and characters split across chunks are still found', async () => {
    const euro = Buffer.from('€')
    expect(
      await joined(['\x1b[2', '00~a\r', euro.subarray(0, 1), euro.subarray(1), 'b\x1b', '[201', '~\r']),
    ).toBe(`a${PASTED_BREAK}€b\r`)
  })

  test('keys that start like a marker pass as they are', async () => {
    expect(await joined(['\x1b[A', '\x1b[2~', 'q'])).toBe('\x1b[A\x1b[2~q')
  })

  test('restorePastedBreaks gives the pasted text back', () => {
    expect(restorePastedBreaks(`a${PASTED_BREAK}b`)).toBe('a\nb')
  })
})
