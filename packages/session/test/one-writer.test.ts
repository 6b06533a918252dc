import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { HistoryEvent } from '@kode/protocol'
import { createMemorySessionStore, SessionError, SessionLockedError, type SessionStore } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'

// One writer per session, always: within one store (leases), between stores of one process and
// between processes (the file store's lock file; see file-store-processes.test.ts for real ones).

let dir: string
const stores: SessionStore[] = []
const fileStore = () => track(createFileSessionStore({ dir, fsync: false }))
const track = (store: SessionStore) => {
  stores.push(store)
  return store
}
const lockFile = (id: string) => join(dir, id, 'writer.lock')
const record = (id: string): HistoryEvent => ({ role: 'user', id, createdAt: 1, parts: [] })

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kode-one-writer-'))
})
afterEach(async () => {
  await Promise.allSettled(stores.splice(0).map((s) => s.close()))
  rmSync(dir, { recursive: true, force: true })
})

/** The settled results of two concurrent calls, winner first. */
async function race<T>(a: Promise<T>, b: Promise<T>): Promise<[T, unknown]> {
  const [first, second] = await Promise.allSettled([a, b])
  const results = [first, second]
  const won = results.filter((r) => r.status === 'fulfilled')
  const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
  expect(won).toHaveLength(1)
  expect(lost).toHaveLength(1)
  return [(won[0] as PromiseFulfilledResult<T>).value, lost[0]!.reason]
}

describe('two concurrent create() for one session id', () => {
  test('in one store: one wins, the loser gets session_locked, and nothing stays locked', async () => {
    const store = fileStore()
    const [info, error] = await race(store.create({ id: 's' }), store.create({ id: 's' }))
    expect(info.id).toBe('s')
    expect(error).toBeInstanceOf(SessionLockedError)
    expect(error).toMatchObject({ code: 'session_locked', owner: 'this-store' })
    await store.append('s', [record('a')])
    await store.close()
    expect(existsSync(lockFile('s')), 'the lock is gone once the store closes').toBe(false)
    // A new store in this same process takes the session at once.
    const next = fileStore()
    await next.append('s', [record('b')])
    expect((await next.read('s')).map((e) => e.id)).toEqual(['a', 'b'])
  })

  test('in two stores of one process: one wins, the loser gets session_locked and holds nothing', async () => {
    const [one, two] = [fileStore(), fileStore()]
    const results = await Promise.allSettled([one.create({ id: 's' }), two.create({ id: 's' })])
    const won = results.findIndex((r) => r.status === 'fulfilled')
    const lost = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    expect(lost?.reason).toMatchObject({ code: 'session_locked', owner: 'this-process' })
    const [winner, loser] = won === 0 ? [one, two] : [two, one]
    await winner.close()
    expect(existsSync(lockFile('s'))).toBe(false)
    await loser.append('s', [record('after')])
    expect((await loser.read('s')).map((e) => e.id)).toEqual(['after'])
  })

  test('the memory store: one wins, the other is refused', async () => {
    const store = track(createMemorySessionStore())
    const [, error] = await race(store.create({ id: 's' }), store.create({ id: 's' }))
    expect(SessionError.is(error)).toBe(true)
  })
})

// The lease rules every store shares are in the store contract (contract/session-store-contract.ts).

describe('a released lease gives the session to other stores and processes', () => {
  test('the lock file goes with the release; another store takes the session', async () => {
    const store = fileStore()
    await store.create({ id: 's' })
    const lease = await store.acquire('s')
    await lease.append([record('one')])
    const other = fileStore()
    const refused = await other.append('s', [record('x')]).catch((e: unknown) => e)
    expect(refused).toMatchObject({ code: 'session_locked', owner: 'this-process' })
    expect((refused as Error).message).toContain('close that store (store.close()) or share one store')
    await lease.release()
    expect(existsSync(lockFile('s'))).toBe(false)
    await other.append('s', [record('two')])
    expect((await store.read('s')).map((e) => e.id)).toEqual(['one', 'two'])
  })
})
