import { createMemorySessionStore, SessionError, type SessionStore } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { notingStore, passingStoreFailure } from '../src/store-failures.js'

// Which failures of a task are the store's: what the workflow retries after a wait.

/** A memory store whose every operation on session `down` fails as a cut connection does. */
function downStore(): { store: SessionStore; cut: Error } {
  const memory = createMemorySessionStore()
  const cut = new Error('Connection terminated unexpectedly')
  const failing = <T>(id: string, call: () => Promise<T>) => (id === 'down' ? Promise.reject(cut) : call())
  const store: SessionStore = {
    ...memory,
    read: (id) => failing(id, () => memory.read(id)),
    readBatches: (id, options) => ({
      [Symbol.asyncIterator]: () => ({
        next: () => failing(id, () => memory.readBatches!(id, options)[Symbol.asyncIterator]().next()),
      }),
    }),
    acquire: async (id) => {
      const lease = await memory.acquire(id)
      return { ...lease, append: () => Promise.reject(cut) }
    },
  }
  return { store, cut }
}

describe('notingStore', () => {
  test("notes what the store, its batched reads and its leases throw, and nothing that is not the store's", async () => {
    const { store, cut } = downStore()
    const failures = new WeakSet<object>()
    const noted = notingStore(store, failures)
    await noted.create({ id: 'up' })
    expect(await noted.read('up')).toEqual([])
    await expect(noted.read('down')).rejects.toBe(cut)
    expect(passingStoreFailure(cut, failures)).toBe(true)

    const { store: other, cut: batchCut } = downStore()
    const batches = notingStore(other, failures).readBatches!('down')
    await expect(batches[Symbol.asyncIterator]().next()).rejects.toBe(batchCut)
    expect(passingStoreFailure(batchCut, failures)).toBe(true)

    const { store: third, cut: appendCut } = downStore()
    const thirdNoted = notingStore(third, failures)
    await thirdNoted.create({ id: 'held' })
    const lease = await thirdNoted.acquire('held')
    await expect(lease.append([])).rejects.toBe(appendCut)
    expect(passingStoreFailure(appendCut, failures)).toBe(true)
    await lease.release()

    // A failure the store did not throw (a listener's, a hook's) is the run's own.
    expect(passingStoreFailure(new Error('Connection terminated unexpectedly'), failures)).toBe(false)
    expect(passingStoreFailure('down', failures)).toBe(false)
  })

  test("the store's refusals are not retried; lost leases, interrupted appends and locked sessions are", async () => {
    const failures = new WeakSet<object>()
    const codes = ['record_too_large', 'corrupt_history', 'store_closed', 'session_not_found'] as const
    for (const code of codes) {
      const error = new SessionError(code, code)
      failures.add(error)
      expect([code, passingStoreFailure(error, failures)]).toEqual([code, false])
    }
    for (const code of ['session_lease_lost', 'append_interrupted', 'session_locked'] as const) {
      const error = new SessionError(code, code)
      failures.add(error)
      expect([code, passingStoreFailure(error, failures)]).toEqual([code, true])
    }
  })

  test('offers what the store offers beyond the required methods, and nothing it lacks', () => {
    const memory = createMemorySessionStore({ maxRecordBytes: 100 })
    const noted = notingStore(memory, new WeakSet())
    expect(typeof noted.readBatches).toBe('function')
    expect(noted.maxRecordBytes).toBe(100)
    const { readBatches: _r, follow: _f, maxRecordBytes: _m, ...bare } = memory
    const plain = notingStore(bare as SessionStore, new WeakSet())
    expect('readBatches' in plain || 'follow' in plain || 'maxRecordBytes' in plain).toBe(false)
  })
})
