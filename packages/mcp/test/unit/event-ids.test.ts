import { describe, expect, test } from 'vitest'
import { eventIdWatch } from '../../src/event-ids.js'

/** Whether an event stream sent as `chunks` named an event. */
function named(chunks: readonly string[]): boolean {
  const watch = eventIdWatch()
  for (const chunk of chunks) watch.feed(new TextEncoder().encode(chunk))
  return watch.seen()
}

describe('eventIdWatch', () => {
  test('an id field names an event, with or without the space after the colon', () => {
    expect(named(['id: 7\ndata: \n\n'])).toBe(true)
    expect(named(['event: message\r\nid:abc\r\n\r\n'])).toBe(true)
  })

  test('an id split across chunks is seen', () => {
    expect(named(['data: {}\n\ni', 'd', ': ', '1\n'])).toBe(true)
  })

  test('an empty id, data or another field mentioning id, names nothing', () => {
    expect(named(['id:\n', 'id: \r\n\n'])).toBe(false)
    expect(named(['data: id: 1\n\n', 'event: x\nidx: 2\n', ':id: 3\n'])).toBe(false)
  })

  test('the last whole id line is what a client resumes from', () => {
    const watch = eventIdWatch()
    for (const chunk of ['id: 1\ndata: {}\n\n', 'id:', ' stream-1_2', '\r\n\n', 'id:\n']) {
      watch.feed(new TextEncoder().encode(chunk))
    }
    expect(watch.last()).toBe('stream-1_2')
  })
})
