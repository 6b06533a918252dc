import { CodecError, decodeHistoryEvent, encodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'

// A record nested deeper than `JSON.stringify` can go is read by `JSON.parse` (which does not
// recurse) but could never be written again. So records nest at most 512 arrays and objects deep
// (the record's own object is the first) when they are written; a deeper line another writer left
// is still read (checking every line read would slow every read), and writing it again says why.

/** `depth` arrays, one in the other, around `inner`, as JSON text. */
const nestedText = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`

/** A valid user message line whose unknown extra field is nested arrays, `depth` levels in all. */
const lineWith = (depth: number) =>
  `{"v":1,"role":"user","id":"u1","createdAt":1,"parts":[{"type":"text","text":"[[[ {{{ ]]"}],"extra":${nestedText(depth - 1)}}`

function nested(depth: number): unknown {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

const record = (extra: unknown) =>
  ({ role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'x' }], extra }) as HistoryEvent

function thrown(run: () => unknown): CodecError {
  try {
    run()
  } catch (error) {
    if (CodecError.is(error)) return error
    throw error
  }
  throw new Error('nothing was thrown')
}

describe('records nest at most 512 levels deep', () => {
  test('a line nested 200,000 arrays deep is read, and writing it again is refused, saying why', () => {
    const read = decodeHistoryEvent(lineWith(200_000))
    expect(read).toMatchObject({ role: 'user', id: 'u1' })
    const error = thrown(() => encodeHistoryEvent(read))
    expect(error.message).toBe(
      'at the top level: expected a record nested at most 512 arrays and objects deep (it nests deeper; Kode never writes such a record)',
    )
  })

  test('at the limit a line is read and written again as it was; one level past it is read but not written', () => {
    const line = lineWith(512)
    expect(encodeHistoryEvent(decodeHistoryEvent(line))).toBe(line)
    expect(thrown(() => encodeHistoryEvent(decodeHistoryEvent(lineWith(513)))).expected).toBe(
      'a record nested at most 512 arrays and objects deep',
    )
  })

  test('brackets inside strings are no nesting', () => {
    const text = `${'[{'.repeat(2_000)}"]`
    const line = encodeHistoryEvent({ role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text }] })
    expect(decodeHistoryEvent(line)).toMatchObject({ parts: [{ text }] })
  })

  test('a record nested past the limit is refused on writing, whether JSON.stringify can go that deep or not', () => {
    for (const depth of [513, 200_000]) {
      const error = thrown(() => encodeHistoryEvent(record(nested(depth))))
      expect(error.expected).toBe('a record nested at most 512 arrays and objects deep')
    }
    expect(encodeHistoryEvent(record(nested(510)))).toContain('"extra":[[')
  })
})
