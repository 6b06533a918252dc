import type { HistoryEvent } from '@kode/protocol'
import { type ReadBatchesOptions, SessionError, type SessionStore } from '@kode/session'
import { expect, test } from 'vitest'

// `SessionStore.readBatches`: the records `read` returns, in order, in batches of at most
// `batchSize`; failures and aborts are errors the loop sees, never a silently short history.

const record = (id: string): HistoryEvent => ({ role: 'user', id, createdAt: 1, parts: [] })
const idsOf = (records: readonly HistoryEvent[]) => records.map((r) => (r as { id: string }).id)
const records = (n: number, prefix = 'r') => Array.from({ length: n }, (_, i) => record(`${prefix}${i}`))

/** Every batch of a read, collected. */
async function batchesOf(store: SessionStore, sessionId: string, options?: ReadBatchesOptions) {
  const batches: HistoryEvent[][] = []
  for await (const batch of store.readBatches!(sessionId, options)) batches.push(batch)
  return batches
}

/** What a promise rejects with (`undefined` when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
    return undefined
  } catch (error) {
    return error
  }
}

/** Registers the readBatches tests inside a store's contract suite; `store()` is the test's store. */
export function describeReadBatchesContract(store: () => SessionStore, defaultBatchSize: number): void {
  test('readBatches yields what read returns, in order, in batches of at most batchSize', async () => {
    const s = store()
    await s.create({ id: 'b' })
    await s.append('b', records(4))
    await s.append('b', records(3, 'q'))
    const batches = await batchesOf(s, 'b', { batchSize: 3 })
    expect(batches.flat()).toEqual(await s.read('b'))
    expect(batches.every((batch) => batch.length >= 1 && batch.length <= 3)).toBe(true)
    expect(batches.length).toBeGreaterThanOrEqual(3)
  })

  test(`readBatches holds the store's default, ${defaultBatchSize} records, per batch`, async () => {
    const s = store()
    await s.create({ id: 'big' })
    await s.append('big', records(2 * defaultBatchSize + 1))
    expect((await batchesOf(s, 'big')).map((batch) => batch.length)).toEqual([
      defaultBatchSize,
      defaultBatchSize,
      1,
    ])
  })

  test('readBatches of an empty session yields nothing; of a missing one fails with session_not_found', async () => {
    const s = store()
    await s.create({ id: 'empty' })
    expect(await batchesOf(s, 'empty')).toEqual([])
    const error = await rejection(batchesOf(s, 'missing'))
    expect(SessionError.is(error) && error.code).toBe('session_not_found')
    expect(SessionError.is(await rejection(batchesOf(s, '../escape')))).toBe(true)
  })

  test('readBatches refuses a batch size that is not a positive integer', async () => {
    const s = store()
    await s.create({ id: 'n' })
    for (const batchSize of [0, -1, 1.5, Number.NaN]) {
      expect(await rejection(batchesOf(s, 'n', { batchSize }))).toBeInstanceOf(TypeError)
    }
  })

  test('an aborted readBatches throws the signal reason: before it starts and between batches', async () => {
    const s = store()
    await s.create({ id: 'a' })
    await s.append('a', records(10))
    const reason = new Error('stop reading')
    expect(await rejection(batchesOf(s, 'a', { signal: AbortSignal.abort(reason) }))).toBe(reason)
    const controller = new AbortController()
    const seen: HistoryEvent[][] = []
    const error = await rejection(
      (async () => {
        for await (const batch of s.readBatches!('a', { batchSize: 2, signal: controller.signal })) {
          seen.push(batch)
          controller.abort()
        }
      })(),
    )
    expect((error as Error).name).toBe('AbortError')
    expect(seen.map(idsOf)).toEqual([['r0', 'r1']])
  })

  test('appends during a readBatches leave it a whole prefix of the history, every record once', async () => {
    const s = store()
    await s.create({ id: 'c' })
    await s.append('c', records(5))
    const got: HistoryEvent[] = []
    for await (const batch of s.readBatches!('c', { batchSize: 2 })) {
      got.push(...batch)
      if (got.length === 2) await s.append('c', records(3, 'late'))
    }
    const history = await s.read('c')
    expect(got.length).toBeGreaterThanOrEqual(5)
    expect(got).toEqual(history.slice(0, got.length))
  })

  test('breaking out of readBatches ends the read; the session can be read and deleted after', async () => {
    const s = store()
    await s.create({ id: 'x' })
    await s.append('x', records(6))
    for await (const batch of s.readBatches!('x', { batchSize: 2 })) {
      expect(idsOf(batch)).toEqual(['r0', 'r1'])
      break
    }
    expect(await s.read('x')).toHaveLength(6)
    await s.delete('x')
    expect(await s.info('x')).toBeUndefined()
  })

  test('a store closed during readBatches fails the read with store_closed', async () => {
    const s = store()
    await s.create({ id: 'z' })
    await s.append('z', records(6))
    const error = await rejection(
      (async () => {
        for await (const _ of s.readBatches!('z', { batchSize: 2 })) await s.close()
      })(),
    )
    expect(SessionError.is(error) && error.code).toBe('store_closed')
  })
}
