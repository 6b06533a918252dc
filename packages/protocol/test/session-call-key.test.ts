import { sessionCallKey } from '@kode/protocol/helpers'
import { expect, test } from 'vitest'

test('sessionCallKey names a call of a session: the same pair, the same key', () => {
  expect(sessionCallKey('child', 'call-1')).toBe(sessionCallKey('child', 'call-1'))
  expect(sessionCallKey(undefined, 'call-1')).toBe(sessionCallKey(undefined, 'call-1'))
})

test('sessionCallKey gives pairs that differ different keys, whatever their ids hold', () => {
  const pairs: [string | undefined, string][] = [
    [undefined, 'c'],
    ['null', 'c'],
    ['', 'c'],
    ['a', 'b:c'],
    ['a:b', 'c'],
    ['a","b', 'c'],
    ['a', '","b","c'],
  ]
  const keys = new Set(pairs.map(([session, call]) => sessionCallKey(session, call)))
  expect(keys.size).toBe(pairs.length)
})
