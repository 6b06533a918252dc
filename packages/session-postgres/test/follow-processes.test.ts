import type { ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { resolve } from 'node:path'
import type { UserMessage } from '@kode/protocol'
import { SessionError, type SessionLease, type SessionStore } from '@kode/session'
import { createPostgresSessionStore } from '@kode/session-postgres'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { bundleForNode } from '../../../test/children/bundle-for-node.js'
import { type Child, startChild } from '../../../test/children/child-process.js'
import { dropSchema, freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'

// The live feed across hosts: a writer process (host A) appends while a follower process (host B)
// follows the session through its own store, from the stored history into the live tail.

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
  for (const proc of running.splice(0)) proc.kill('SIGKILL')
  await Promise.allSettled(stores.splice(0).map((s) => s.close()))
  await dropSchema(schema)
})

const openStore = () => {
  const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema, leaseMs: 1_000 })
  stores.push(store)
  return store
}
const start = (...args: string[]): Child => startChild(child, running, ...args)
const writer = () => start('batches', postgresUrl(), schema, 's', '5000', 'a')
const follower = (from = 0) => start('follow', postgresUrl(), schema, 's', String(from))
const user = (id: string): UserMessage => ({ role: 'user', id, createdAt: 1, parts: [] })

/** What a follower printed for records, in order. */
const received = (c: Child) => c.lines.filter((l) => l.startsWith('rec '))
/** Waits until a follower printed its record at `index`. */
const reached = (c: Child, index: number) => c.line((l) => l.startsWith(`rec ${index} `))
/** The lines a follower from `from` must print for the stored history: every record once, in order. */
async function expected(store: SessionStore, from = 0): Promise<string[]> {
  const history = await store.read('s')
  return history.slice(from).map((r, i) => `rec ${from + i} ${(r as UserMessage).id}`)
}
/** Stops a follower (its signal aborts) and returns how many records it said it saw. */
async function stop(c: Child): Promise<number> {
  c.send('stop')
  const ended = await c.line((l) => l.startsWith('ended '))
  expect(await c.exited).toBe(0)
  return Number(ended.slice(6))
}

/** Runs one statement on a connection of its own. */
async function query(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: postgresUrl() })
  await client.connect()
  try {
    return await client.query(sql, params)
  } finally {
    await client.end()
  }
}
/** The backends listening on this test's feed channel. */
const listeners = async () =>
  (await query('select pid from pg_stat_activity where query = $1', [`listen "${schema}_records"`])).rows.map(
    (r: { pid: number }) => r.pid,
  )
/**
 * Waits until exactly one backend listens on the feed channel, other than `not`, and returns it.
 * A follower that found its records in the stored history may print them before it first listens.
 */
async function oneListener(not?: number): Promise<number | undefined> {
  for (;;) {
    const now = await listeners()
    if (now.length === 1 && now[0] !== not) return now[0]
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function takeOver(store: SessionStore): Promise<SessionLease> {
  for (;;) {
    try {
      return await store.acquire('s')
    } catch (error) {
      if (!SessionError.is(error) || error.code !== 'session_locked') throw error
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
}

describe('following a session across host processes', () => {
  test('host B sees every record host A appends, once and in order, from the stored history into the live tail', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.append('s', [user('stored-0'), user('stored-1')])
    const a = writer()
    const b = follower()
    await Promise.all([a, b].map((c) => c.line((l) => l === 'ready')))
    for (const c of [a, b]) c.send('go')
    await a.line((l) => l === 'leased')
    a.send('40')
    await reached(b, 2 + 40 * 3 - 1)
    // A second follower joins mid-stream, from a position in the middle of the history.
    const c = follower(50)
    await c.line((l) => l === 'ready')
    c.send('go')
    a.send('40')
    await Promise.all([reached(b, 2 + 80 * 3 - 1), reached(c, 2 + 80 * 3 - 1)])
    a.send('end')
    await a.line((l) => l === 'released')
    expect(received(b)).toEqual(await expected(store))
    expect(received(c)).toEqual(await expected(store, 50))
    expect(await stop(b)).toBe(2 + 80 * 3)
    expect(await stop(c)).toBe(2 + 80 * 3 - 50)
  })

  test('host A killed with SIGKILL mid-append: host B saw exactly what was committed, then the next writer', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    const a = start('write', postgresUrl(), schema, 's', '1000', 'a')
    const b = follower()
    await Promise.all([a, b].map((c) => c.line((l) => l === 'ready')))
    for (const c of [a, b]) c.send('go')
    await a.line((l) => l === 'ack 20')
    a.process.kill('SIGKILL')
    await a.exited
    const lease = await takeOver(store)
    await lease.append([user('next')])
    await lease.release()
    const history = await store.read('s')
    await reached(b, history.length - 1)
    expect(received(b)).toEqual(await expected(store))
    expect(received(b).at(-1)).toBe(`rec ${history.length - 1} next`)
    await stop(b)
  })

  test('a lost notification connection: host B listens again and misses nothing appended meanwhile', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    const a = writer()
    const b = follower()
    await Promise.all([a, b].map((c) => c.line((l) => l === 'ready')))
    for (const c of [a, b]) c.send('go')
    await a.line((l) => l === 'leased')
    a.send('5')
    await reached(b, 14)
    const first = await oneListener()
    expect(first).toBeTypeOf('number')
    // The database ends host B's LISTEN connection (a restart, a network cut, an admin).
    await query('select pg_terminate_backend($1)', [first])
    a.send('5')
    await reached(b, 29)
    // B listens again on a new connection, and records appended after that still arrive.
    expect(await oneListener(first)).toBeTypeOf('number')
    a.send('5')
    await reached(b, 44)
    a.send('end')
    await a.line((l) => l === 'released')
    expect(received(b)).toEqual(await expected(store))
    expect(await stop(b)).toBe(45)
  })
})
