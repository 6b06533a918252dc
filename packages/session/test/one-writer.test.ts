import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { HistoryEvent } from '@kode/protocol'
import {
  createFileSessionStore,
  createMemorySessionStore,
  SessionError,
  SessionLockedError,
  type SessionStore,
} from '@kode/session'
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

describe.each([
  ['file', () => fileStore()],
  ['memory', () => track(createMemorySessionStore())],
])('leases (%s store)', (_name, open) => {
  test('one lease at a time; other writers of the store are refused with a message that says what to do', async () => {
    const store = open()
    await store.create({ id: 's' })
    const lease = await store.acquire('s')
    const [, error] = await race(Promise.resolve(lease), store.acquire('s'))
    expect(error).toBeInstanceOf(SessionLockedError)
    expect((error as Error).message).toBe(
      'session s is being written by another writer of this store (an agent running a task on it, or a lease not released yet): wait for that task to end, or use another session id (forkSession copies one)',
    )
    for (const attempt of [store.append('s', [record('plain')]), store.delete('s')]) {
      expect(
        await attempt.then(
          () => 'resolved',
          (e: SessionError) => e.code,
        ),
      ).toBe('session_locked')
    }
    expect(await store.create({ id: 's' }).catch((e: SessionError) => e.code)).toBe('session_exists')
    await lease.append([record('leased')])
    // Metadata is not history: it may change while a task runs.
    await store.update('s', { title: 'titled' })
    await lease.release()
    await lease.release()
    expect(await lease.append([record('late')]).catch((e: SessionError) => e.code)).toBe('store_closed')
    const next = await store.acquire('s')
    await next.append([record('next')])
    await next.release()
    await store.append('s', [record('plain')])
    expect((await store.read('s')).map((e) => e.id)).toEqual(['leased', 'next', 'plain'])
    expect(await store.info('s')).toMatchObject({ title: 'titled', recordCount: 3 })
  })

  test('of two concurrent acquire() calls exactly one wins', async () => {
    const store = open()
    await store.create({ id: 's' })
    const [lease, error] = await race(store.acquire('s'), store.acquire('s'))
    expect(SessionError.is(error) && error.code).toBe('session_locked')
    await lease.release()
  })

  test('acquire of a missing session is session_not_found and holds nothing', async () => {
    const store = open()
    expect(await store.acquire('nope').catch((e: SessionError) => e.code)).toBe('session_not_found')
    await store.create({ id: 'nope' })
    await (await store.acquire('nope')).release()
  })
})

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
