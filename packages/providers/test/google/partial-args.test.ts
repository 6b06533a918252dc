import { parseJsonPath, StreamedArgs } from '@kode/providers'
import { describe, expect, test } from 'vitest'

describe('parseJsonPath', () => {
  test('reads dotted keys, array indexes and quoted keys', () => {
    expect(parseJsonPath("$.a.b[0]['c.d'][12]")).toEqual(['a', 'b', 0, 'c.d', 12])
  })

  test('the root or an unreadable path gives no segments', () => {
    expect(parseJsonPath('$')).toEqual([])
    expect(parseJsonPath('a.b')).toEqual([])
    expect(parseJsonPath('$.a[x]')).toEqual([])
  })
})

describe('StreamedArgs', () => {
  test('a path through __proto__ is refused, not followed', () => {
    const args = new StreamedArgs()
    expect(() => args.add([{ jsonPath: '$.__proto__.polluted', boolValue: true }])).toThrow(
      /unsafe partialArgs path/,
    )
    expect(JSON.stringify(args.value)).toBe('{}')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  test('pieces that move between paths and back each continue their own value', () => {
    const args = new StreamedArgs()
    args.add([
      { jsonPath: '$.a', stringValue: 'x' },
      { jsonPath: '$.a', stringValue: 'y' },
    ])
    args.add([
      { jsonPath: '$.b[0]', stringValue: 'p' },
      { jsonPath: '$.a', stringValue: 'z' },
    ])
    args.add([
      { jsonPath: '$.b[0]', stringValue: 'q' },
      { jsonPath: '$.c.d', numberValue: 1 },
    ])
    expect(JSON.stringify(args.value)).toBe('{"a":"xyz","b":["pq"],"c":{"d":1}}')
  })

  test('a piece with no value or no path is ignored', () => {
    const args = new StreamedArgs()
    args.add([{ jsonPath: '$.a' }, { stringValue: 'x' }, { jsonPath: '$.b', numberValue: 0 }])
    expect(JSON.stringify(args.value)).toBe('{"b":0}')
  })
})
