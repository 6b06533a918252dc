import {
  CodecError,
  decodeHistoryEvent,
  encodeHistoryEvent,
  type UserMessage,
  validateHistoryEvent,
} from '@kode/protocol'
import { describe, expect, test } from 'vitest'

// URL schemes are case-insensitive (RFC 3986): an image URL is `http(s):` or `data:` in any case.

const userWith = (url: string): UserMessage => ({
  role: 'user',
  id: 'u1',
  createdAt: 1,
  parts: [{ type: 'image_url', url }],
})

describe('an image URL scheme in any case', () => {
  test.each([
    'HTTPS://example.com/a.png',
    'Http://example.com/a.png',
    'Data:image/png;base64,AAAA',
    'DATA:,x',
  ])('%s is valid, written as format version 4 and read back as it was', (url) => {
    const message = userWith(url)
    expect(validateHistoryEvent(message)).toBe(message)
    const line = encodeHistoryEvent(message)
    expect(line.startsWith('{"v":4,')).toBe(true)
    expect(decodeHistoryEvent(line)).toStrictEqual(message)
  })

  test('a lower-case scheme keeps the oldest version that holds it', () => {
    expect(encodeHistoryEvent(userWith('https://example.com/a.png')).startsWith('{"v":1,')).toBe(true)
  })

  test.each(['ftp://example.com/a.png', 'HTTPX://example.com', 'blob:https://example.com/1', ' https://x'])(
    '%s is still refused',
    (url) => {
      expect(() => validateHistoryEvent(userWith(url))).toThrow(CodecError)
    },
  )
})
