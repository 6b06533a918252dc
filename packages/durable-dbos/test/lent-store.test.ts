import type { HistoryEvent } from '@kode/protocol'
import {
  createMemorySessionStore,
  replaySession,
  replaySessionBatches,
  type SessionStore,
} from '@kode/session'
import { describe, expect, test } from 'vitest'
import { lentStore } from '../src/lent-store.js'

// The store a durable task's agent sees: everything the host's store offers, reads in batches and
// following included, with the task's session lent to the agent.

const records: HistoryEvent[] = Array.from({ length: 5 }, (_, i) => ({
  role: 'user' as const,
  id: `u${i}`,
  createdAt: i,
  parts: [{ type: 'text' as const, text: `message ${i}` }],
}))

/** A memory store holding session `s` with five messages, and the lease on it a workflow holds. */
async function hostStore() {
  const store = createMemorySessionStore({ now: () => 1 })
  await store.create({ id: 's' })
  await store.append('s', records)
  const lease = await store.acquire('s')
  return { store, lease }
}

/** The host's store, counting the whole reads and the batched ones it serves. */
function counting(store: SessionStore) {
  const calls = { read: 0, readBatches: [] as (number | undefined)[] }
  const counted: SessionStore = {
    ...store,
    read: (id) => {
      calls.read++
      return store.read(id)
    },
    readBatches: (id, options) => {
      calls.readBatches.push(options?.batchSize)
      return store.readBatches!(id, options)
    },
  }
  return { counted, calls }
}

describe('lentStore', () => {
  test('reads in batches where the host store does: replay through it does not read whole', async () => {
    const { store, lease } = await hostStore()
    const { counted, calls } = counting(store)
    const lent = lentStore(counted, lease)
    const batches: number[] = []
    for await (const events of replaySessionBatches(lent, 's', { batchSize: 2 })) batches.push(events.length)
    expect(calls).toEqual({ read: 0, readBatches: [2] })
    expect(batches).toEqual([2, 2, 1])
    expect(await replaySession(lent, 's')).toEqual(await replaySession(store, 's'))
  })

  test('follows where the host store does, appends through the lent lease included', async () => {
    const { store, lease } = await hostStore()
    const lent = lentStore(store, lease)
    expect(lent.follow).toBeTypeOf('function')
    const controller = new AbortController()
    const seen: string[] = []
    const following = (async () => {
      for await (const { record } of lent.follow!('s', { from: records.length, signal: controller.signal })) {
        seen.push(record.id)
        controller.abort()
      }
    })()
    const borrowed = await lent.acquire('s')
    await borrowed.append([{ ...records[0]!, id: 'u5' }])
    await following
    expect(seen).toEqual(['u5'])
  })

  test("passes list's options to the host store", async () => {
    const { store, lease } = await hostStore()
    await store.create({ id: 'sub', parentSessionId: 's', subAgent: { name: 'helper' } })
    await store.create({ id: 'other' })
    const lent = lentStore(store, lease)
    expect((await lent.list({ parentSessionId: 's' })).map((info) => info.id)).toEqual(['sub'])
    expect(await lent.list({ limit: 2 })).toEqual(await store.list({ limit: 2 }))
    expect(await lent.list()).toHaveLength(3)
  })

  test('offers no optional method the host store lacks, so callers fall back as they would on it', async () => {
    const { store, lease } = await hostStore()
    const { readBatches: _batches, follow: _follow, ...bare } = store
    const lent = lentStore(bare, lease)
    expect('readBatches' in lent).toBe(false)
    expect('follow' in lent).toBe(false)
    expect('maxRecordBytes' in lent).toBe(false)
    expect(await replaySession(lent, 's')).toEqual(await replaySession(store, 's'))
  })

  test("says the host store's record size limit, as the store does", async () => {
    const { store, lease } = await hostStore()
    expect(lentStore({ ...store, maxRecordBytes: 4096 }, lease).maxRecordBytes).toBe(4096)
  })
})
