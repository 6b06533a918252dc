import { describe, expect, test } from 'vitest'
import { canResumeFrom, eventIdWatch } from '../../src/event-ids.js'

/** The event id a client resumes an event stream sent as `chunks` from (`undefined`: none). */
function resumesFrom(chunks: readonly (string | Uint8Array)[]): string | undefined {
  const watch = eventIdWatch()
  for (const chunk of chunks) watch.feed(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk)
  return watch.last()
}

describe('eventIdWatch', () => {
  test('an event with an id and data names it, with or without the space after the colon', () => {
    expect(resumesFrom(['id: 7\ndata: \n\n'])).toBe('7')
    expect(resumesFrom(['event: message\r\nid:abc\r\ndata\r\n\r\n'])).toBe('abc')
  })

  test('an event split across chunks, a CRLF among them, is read whole', () => {
    expect(resumesFrom(['data: {}\n\ni', 'd', ': ', '1\r', '\nda', 'ta: {}\r', '\n\r', '\n'])).toBe('1')
  })

  test('an id names nothing until its event is dispatched by a blank line', () => {
    expect(resumesFrom(['id: 1\ndata: {}\n'])).toBeUndefined()
    expect(resumesFrom(['id: 1\ndata: {}\n\nid: 2\ndata: {}\n'])).toBe('1')
  })

  test('an event without a data field is never dispatched, so its id names nothing', () => {
    expect(resumesFrom(['id: lone\n\n'])).toBeUndefined()
    expect(resumesFrom(['event: message\r\nid:abc\r\n\r\n'])).toBeUndefined()
    expect(resumesFrom(['id: first\ndata: {}\n\n', 'id: second\n\n'])).toBe('first')
  })

  test('an empty id, one holding NUL, data or another field mentioning id, names nothing', () => {
    expect(resumesFrom(['id:\ndata\n\n', 'id: \r\ndata: x\n\n', 'id\ndata\n\n'])).toBeUndefined()
    expect(resumesFrom(['id: a\u0000b\ndata: {}\n\n'])).toBeUndefined()
    expect(resumesFrom(['data: id: 1\n\n', 'event: x\nidx: 2\ndata\n\n', ':id: 3\ndata\n\n'])).toBeUndefined()
  })

  test('the id is per event: one without an id leaves the last one standing', () => {
    expect(resumesFrom(['id: 1\ndata: {}\n\n', 'data: {}\n\n'])).toBe('1')
  })

  test('a byte order mark at the start is not part of the first field', () => {
    const bom = new Uint8Array([0xef, 0xbb])
    expect(resumesFrom([bom, new Uint8Array([0xbf]), 'id: 9\ndata\n\n'])).toBe('9')
  })

  test('the value keeps what follows the one space after the colon', () => {
    expect(resumesFrom(['id:  stream-1_2 \ndata: {}\n\n'])).toBe(' stream-1_2 ')
  })
})

describe('canResumeFrom', () => {
  test('an id a header carries: visible ASCII, inner spaces and tabs, Latin-1 letters, spaces around it', () => {
    for (const id of ['stream-1_2', 'a b\tc', 'é', 'ÿ\u0080', ' padded ', ''])
      expect(canResumeFrom(id)).toBe(true)
  })

  test('an id holding a character above U+00FF or a control character other than tab is not one', () => {
    for (const id of ['✓', 'a🙂', 'a\u0001b', 'a\u001fb', 'a\u007fb', 'a\u000bb'])
      expect(canResumeFrom(id)).toBe(false)
  })
})
