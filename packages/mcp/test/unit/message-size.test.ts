import { describe, expect, test } from 'vitest'
import { bodyCounter, eventCounter, lineCounter } from '../../src/message-size.js'

const bytes = (text: string) => new TextEncoder().encode(text)

/** Feeds `chunks` in turn: the index of the first that tipped the counter over, or -1. */
function tips(counter: (chunk: Uint8Array) => boolean, chunks: readonly string[]): number {
  return chunks.findIndex((chunk) => counter(bytes(chunk)))
}

describe('lineCounter: a stdio message is a line', () => {
  test('lines up to the limit pass, whatever the chunks', () => {
    expect(tips(lineCounter(4), ['abcd\nab', 'cd\n', 'a', 'b', 'c', 'd\nabcd\n'])).toBe(-1)
  })

  test('a line one byte over the limit tips it, when it is over', () => {
    expect(tips(lineCounter(4), ['abcd\nab', 'c', 'de'])).toBe(2)
    // Ended in the same chunk it grew too long in.
    expect(tips(lineCounter(4), ['ab', 'cde\nab\n'])).toBe(1)
    // Wholly inside one chunk, between shorter lines.
    expect(tips(lineCounter(4), ['a\nabcde\nb\n'])).toBe(0)
  })

  test('a line that never ends tips it once it passes the limit', () => {
    const counter = lineCounter(10)
    expect([1, 2, 3].map(() => counter(bytes('xxxx')))).toEqual([false, false, true])
  })
})

describe('eventCounter: an event stream message is an event', () => {
  test('events up to the limit pass, with LF, CRLF or CR line ends, across chunks', () => {
    // "data: ab" (8) + "\n" + "id: 1" (5): 14 bytes of the event at most.
    for (const end of ['\n', '\r\n', '\r']) {
      const stream = `data: ab${end}id: 1${end}${end}data: ab${end}id: 1${end}${end}`
      const chunks = stream.match(/.{1,3}/gs) ?? []
      expect(tips(eventCounter(14), chunks)).toBe(-1)
      expect(tips(eventCounter(13), chunks)).not.toBe(-1)
    }
  })

  test('a blank line starts the count again; a CRLF split across chunks is one line end', () => {
    const counter = eventCounter(10)
    expect(tips(counter, ['data: 1234\r', '\n\r', '\ndata: 1234\n\n'])).toBe(-1)
  })

  test('an event that never ends tips it, however many short lines it has', () => {
    expect(tips(eventCounter(20), Array(10).fill('data: x\n'))).toBeGreaterThan(0)
  })
})

describe('bodyCounter: any other body is one message', () => {
  test('counts the whole body', () => {
    expect(tips(bodyCounter(7), ['{"a"', ':1}'])).toBe(-1)
    expect(tips(bodyCounter(7), ['{"a"', ':12}'])).toBe(1)
  })
})
