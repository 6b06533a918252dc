import { encodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import {
  createMemorySessionStore,
  encodeRecords,
  recordBytesOver,
  SessionError,
  unstampedRecordBytesOver,
} from '@kode/session'
import { describe, expect, test } from 'vitest'

const record = (id: string, text: string): HistoryEvent => ({
  role: 'user',
  id,
  createdAt: 1,
  parts: [{ type: 'text', text }],
})

describe('the memory store with maxRecordBytes', () => {
  test('a record over the limit in UTF-8 fails the whole append with record_too_large, nothing written', async () => {
    const store = createMemorySessionStore({ maxRecordBytes: 1000 })
    expect(store.maxRecordBytes).toBe(1000)
    await store.create({ id: 's' })
    // 400 two-byte characters: 400 units, over 800 bytes; 600 of them are over 1000.
    await store.append('s', [record('fits', 'é'.repeat(400))])
    const error = await store.append('s', [record('ok', 'x'), record('big', 'é'.repeat(600))]).catch((e) => e)
    expect(SessionError.is(error) && error.code).toBe('record_too_large')
    expect((error as Error).message).toMatch(
      /^record 1 of 2 appended to s is 12\d\d bytes encoded, over this store's limit of 1000 bytes \(maxRecordBytes\): nothing was written/,
    )
    expect((await store.read('s')).map((e) => e.id)).toEqual(['fits'])
  })

  test('without the option there is no limit, and a bad limit is refused when the store is made', () => {
    expect(createMemorySessionStore().maxRecordBytes).toBeUndefined()
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createMemorySessionStore({ maxRecordBytes: bad })).toThrow(
        new TypeError('maxRecordBytes must be a positive integer'),
      )
    }
  })
})

describe('encodeRecords', () => {
  test('counts UTF-8 bytes: four for a character outside the BMP; a lone surrogate is written as a six-byte escape', () => {
    const line = (text: string) => encodeRecords('s', [record('r', text)])[0]!
    const emoji = line('😀')
    const exact = Buffer.byteLength(emoji)
    expect(encodeRecords('s', [record('r', '😀')], exact)).toEqual([emoji])
    expect(() => encodeRecords('s', [record('r', '😀')], exact - 1)).toThrow(/is \d+ bytes encoded/)
    // JSON writes a lone surrogate as a `\ud800` escape: six ASCII bytes.
    expect(Buffer.byteLength(line('\ud800'))).toBe(Buffer.byteLength(line('a')) + 5)
  })

  test('an invalid record fails the batch with invalid_record naming it', () => {
    const bad = { role: 'user', id: 'r', createdAt: 'then', parts: [] } as unknown as HistoryEvent
    expect(() => encodeRecords('s', [record('a', 'x'), bad])).toThrow(
      expect.objectContaining({
        code: 'invalid_record',
        message: expect.stringMatching(/^record 1 of 2 appended to s/),
      }),
    )
  })
})

describe('recordBytesOver', () => {
  test("measures a record as encodeRecords does: its line's UTF-8 size when over the limit, else 0", () => {
    const big = record('big', 'é😀'.repeat(300))
    const bytes = new TextEncoder().encode(encodeHistoryEvent(big)).length
    expect(recordBytesOver(big, bytes - 1)).toBe(bytes)
    expect(recordBytesOver(big, bytes)).toBe(0)
    expect(recordBytesOver(big, undefined)).toBe(0)
    // The same limit, the same verdict as an append's.
    expect(() => encodeRecords('s', [big], bytes - 1)).toThrow(`is ${bytes} bytes encoded`)
    expect(encodeRecords('s', [big], bytes)).toHaveLength(1)
  })
})

describe('unstampedRecordBytesOver', () => {
  test('keeps room for the longest timestamp, so what it lets through is never refused at any time', async () => {
    const latest = { ...record('m', 'x'.repeat(500)), createdAt: -Number.MAX_VALUE }
    const bytes = new TextEncoder().encode(encodeHistoryEvent(latest)).length
    // Whatever createdAt the record holds now, it is measured as if it took the most characters.
    for (const createdAt of [0, 1_764_000_000_000, -Number.MAX_VALUE]) {
      const unstamped = { ...latest, createdAt }
      expect(unstampedRecordBytesOver(unstamped, bytes)).toBe(0)
      expect(unstampedRecordBytesOver(unstamped, bytes - 1)).toBe(bytes)
    }
    expect(unstampedRecordBytesOver(latest, undefined)).toBe(0)
    const store = createMemorySessionStore({ maxRecordBytes: bytes })
    await store.create({ id: 's' })
    await store.append('s', [latest])
    expect(await store.read('s')).toEqual([latest])
  })
})
