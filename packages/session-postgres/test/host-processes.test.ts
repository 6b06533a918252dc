import type { ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { SessionError, type SessionLease, type SessionStore } from '@kode/session'
import { createPostgresSessionStore } from '@kode/session-postgres'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { bundleForNode } from '../../../test/children/bundle-for-node.js'
import { type Child, startChild } from '../../../test/children/child-process.js'
import { dropSchema, freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'

// Real host processes sharing one Postgres: a writer killed with SIGKILL mid-append, a writer
// paused (SIGSTOP) past its lease and woken after another host took the session over, and two
// hosts creating one new session at once.

let child: string
let schema: string
const running: ChildProcess[] = []
const stores: SessionStore[] = []

beforeAll(async () => {
  child = await bundleForNode(resolve(import.meta.dirname, 'processes/host-child.ts'), {
    external: ['pg'],
    packageDir: resolve(import.meta.dirname, '..'),
  })
}, 60_000)
afterAll(() => rmSync(resolve(child, '..'), { recursive: true, force: true }))
beforeEach(() => {
  schema = freshSchema()
})
afterEach(async () => {
  for (const proc of running.splice(0)) {
    proc.kill('SIGCONT')
    proc.kill('SIGKILL')
  }
  await Promise.allSettled(stores.splice(0).map((s) => s.close()))
  await dropSchema(schema)
})

const openStore = (leaseMs = 5_000) => {
  const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema, leaseMs })
  stores.push(store)
  return store
}

const start = (...args: string[]): Child => startChild(child, running, ...args)

const go = (c: Child) => c.send('go')
/** The batch numbers a child printed `ack` for. */
const acked = (c: Child) => c.lines.filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4)))

/** Checks the history is whole batches of three, in order, and returns them as `name-i` labels. */
function batchesOf(ids: string[]): string[] {
  expect(ids.length % 3).toBe(0)
  const batches: string[] = []
  for (let k = 0; k < ids.length; k += 3) {
    const label = ids[k]!.replace(/-0$/, '')
    expect(ids.slice(k, k + 3)).toEqual([0, 1, 2].map((j) => `${label}-${j}`))
    batches.push(label)
  }
  return batches
}

/** Takes the session once the lease of a stopped writer expired (polls; no fixed sleep). */
async function takeOver(store: SessionStore, sessionId: string): Promise<SessionLease> {
  for (;;) {
    try {
      return await store.acquire(sessionId)
    } catch (error) {
      if (!SessionError.is(error) || error.code !== 'session_locked') throw error
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
}

describe('host processes sharing one Postgres', () => {
  test('a writer killed with SIGKILL mid-append loses nothing it was told was written', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    const writer = start('write', postgresUrl(), schema, 's', '300', 'a')
    await writer.line((l) => l === 'ready')
    go(writer)
    await writer.line((l) => l === 'ack 30')
    writer.process.kill('SIGKILL')
    await writer.exited
    // The dead writer's lease expires by itself and a new writer takes the session over; from
    // then on nothing of the dead one (a statement still running in the server) can land.
    const lease = await takeOver(store, 's')
    const ids = (await store.read('s')).map((e) => e.id)
    const batches = batchesOf(ids)
    const acks = acked(writer)
    // Every acknowledged batch is there, in order; at most the one in flight landed beyond them.
    expect(batches.slice(0, acks.length)).toEqual(acks.map((i) => `a-${i}`))
    expect(batches.length - acks.length).toBeLessThanOrEqual(1)
    expect((await store.info('s'))?.recordCount).toBe(ids.length)
    await lease.append([{ role: 'user', id: 'next', createdAt: 1, parts: [] }])
    await lease.release()
    expect((await store.read('s')).map((e) => e.id)).toEqual([...ids, 'next'])
  })

  test('a paused writer that wakes after another host took over is refused and writes nothing', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    const writer = start('write', postgresUrl(), schema, 's', '400', 'a')
    await writer.line((l) => l === 'ready')
    go(writer)
    await writer.line((l) => l === 'ack 5')
    writer.process.kill('SIGSTOP')
    const lease = await takeOver(store, 's')
    await lease.append([
      { role: 'user', id: 'b-0-0', createdAt: 1, parts: [] },
      { role: 'user', id: 'b-0-1', createdAt: 1, parts: [] },
      { role: 'user', id: 'b-0-2', createdAt: 1, parts: [] },
    ])
    const before = (await store.read('s')).map((e) => e.id)
    writer.process.kill('SIGCONT')
    expect(await writer.line((l) => l.startsWith('refused '))).toBe('refused session_lease_lost')
    await writer.exited
    await lease.append([
      { role: 'user', id: 'b-1-0', createdAt: 1, parts: [] },
      { role: 'user', id: 'b-1-1', createdAt: 1, parts: [] },
      { role: 'user', id: 'b-1-2', createdAt: 1, parts: [] },
    ])
    await lease.release()
    const ids = (await store.read('s')).map((e) => e.id)
    expect(ids.slice(0, before.length), 'the woken writer wrote nothing').toEqual(before)
    const batches = batchesOf(ids)
    const firstB = batches.indexOf('b-0')
    expect(batches.slice(firstB)).toEqual(['b-0', 'b-1'])
    expect(batches.slice(0, firstB).every((b) => b.startsWith('a-'))).toBe(true)
    expect(batches.slice(0, acked(writer).length)).toEqual(acked(writer).map((i) => `a-${i}`))
    expect((await store.info('s'))?.recordCount).toBe(ids.length)
  })

  test('two hosts creating one new session at once: one creates it, both write whole turns in turn', async () => {
    // A schema nobody created yet: both hosts also race to create the tables.
    const hosts = ['a', 'b'].map((name) => start('create', postgresUrl(), schema, 'new', name))
    await Promise.all(hosts.map((h) => h.line((l) => l === 'ready')))
    for (const h of hosts) go(h)
    await Promise.all(hosts.map((h) => h.line((l) => l === 'done')))
    const outcomes = hosts.map((h) => h.lines.find((l) => l === 'created' || l === 'exists')).sort()
    expect(outcomes).toEqual(['created', 'exists'])
    const store = openStore()
    const ids = (await store.read('new')).map((e) => e.id)
    expect(batchesOf(ids).sort()).toEqual(['a-0', 'b-0'])
    expect(await store.info('new')).toMatchObject({ recordCount: 6 })
    expect((await store.list()).map((s) => s.id)).toEqual(['new'])
  })
})
