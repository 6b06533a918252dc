import type { HistoryEvent } from '@kode/protocol'
import { type FollowedRecord, followStart, SessionError, type SessionStore } from '@kode/session'
import { expect, test } from 'vitest'

// `SessionStore.follow`, for the stores that have it: every record exactly once, in order, with its
// position; the iteration ends quietly on abort, break or close.

const record = (id: string): HistoryEvent => ({ role: 'user', id, createdAt: 1, parts: [] })
const ids = (records: readonly FollowedRecord[]) => records.map((r) => (r.record as { id: string }).id)

/** What the shared rule (`followStart`) throws for `from`. */
function refusalOf(from: number): unknown {
  try {
    followStart(from)
  } catch (error) {
    return error
  }
  throw new Error(`followStart accepted ${from}`)
}

/** Reads a follow until `count` records came (then stops it) or the iteration ended by itself. */
export async function take(feed: AsyncIterable<FollowedRecord>, count: number): Promise<FollowedRecord[]> {
  const got: FollowedRecord[] = []
  if (count === 0) return got
  for await (const r of feed) {
    got.push(r)
    if (got.length === count) break
  }
  return got
}

/** Registers the follow tests inside a store's contract suite; `store()` is the test's store. */
export function describeFollowContract(store: () => SessionStore): void {
  const follow = (sessionId: string, options?: Parameters<NonNullable<SessionStore['follow']>>[1]) =>
    store().follow!(sessionId, options)

  test('follow yields the history from a position, then each later append, each record once', async () => {
    const s = store()
    await s.create({ id: 'f' })
    await s.append('f', [record('a'), record('b'), record('c')])
    const reading = take(follow('f', { from: 1 }), 6)
    await s.append('f', [record('d')])
    const lease = await s.acquire('f')
    await lease.append([record('e'), record('f')])
    await lease.append([record('g')])
    await lease.release()
    const got = await reading
    expect(ids(got)).toEqual(['b', 'c', 'd', 'e', 'f', 'g'])
    expect(got.map((r) => r.index)).toEqual([1, 2, 3, 4, 5, 6])
  })

  test('followers see concurrent appends exactly once and in order, and resume from an index', async () => {
    const s = store()
    await s.create({ id: 'f' })
    const n = 60
    const readers = [take(follow('f'), n), take(follow('f', { from: 0 }), n)]
    const lease = await s.acquire('f')
    await Promise.all(
      Array.from({ length: n / 2 }, (_, i) => lease.append([record(`${2 * i}`), record(`${2 * i + 1}`)])),
    )
    await lease.release()
    const expected = Array.from({ length: n }, (_, i) => `${i}`)
    for (const got of await Promise.all(readers)) {
      expect(ids(got)).toEqual(expected)
      expect(got.map((r) => r.index)).toEqual(expected.map(Number))
    }
    // A follower that stopped at index 41 resumes with from: 42.
    expect(ids(await take(follow('f', { from: 42 }), n - 42))).toEqual(expected.slice(42))
  })

  test('follow ends quietly when its signal aborts, also while waiting, and yields nothing once aborted', async () => {
    const s = store()
    await s.create({ id: 'f' })
    await s.append('f', [record('a')])
    const abort = new AbortController()
    const got: FollowedRecord[] = []
    const reading = (async () => {
      for await (const r of follow('f', { signal: abort.signal })) {
        got.push(r)
        if (got.length === 1) abort.abort()
      }
    })()
    await reading
    expect(ids(got)).toEqual(['a'])
    expect(await take(follow('f', { signal: AbortSignal.abort() }), 1)).toEqual([])
  })

  test('a follower waiting for records ends when the store closes', async () => {
    const s = store()
    await s.create({ id: 'f' })
    const reading = take(follow('f'), 1)
    // Let the follower reach its wait before the store closes.
    await new Promise((resolve) => setTimeout(resolve, 50))
    await s.close()
    expect(await reading).toEqual([])
  })

  test('follow of a missing or deleted session is session_not_found; a bad position a TypeError', async () => {
    const s = store()
    const missing = await take(follow('nope'), 1).catch((e: unknown) => e)
    expect(SessionError.is(missing) && missing.code).toBe('session_not_found')
    await s.create({ id: 'f' })
    const reading = take(follow('f'), 1).catch((e: unknown) => e)
    await new Promise((resolve) => setTimeout(resolve, 50))
    await s.delete('f')
    // A store learns of a delete on its next look at the session: an append elsewhere, or its own.
    await s.create({ id: 'other' })
    await s.append('other', [record('x')])
    const deleted = await reading
    expect(SessionError.is(deleted) && deleted.code).toBe('session_not_found')
    await expect(take(follow('other', { from: -1 }), 1)).rejects.toThrow(TypeError)
  })

  test('follow refuses a position that is not a non-negative integer, as every store does', async () => {
    const s = store()
    await s.create({ id: 'positions' })
    for (const from of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = await take(follow('positions', { from }), 1).catch((e: unknown) => e)
      expect(error).toEqual(refusalOf(from))
    }
  })
}
