import { randomUUID } from 'node:crypto'
import { createMemorySessionStore, type SessionInfo, type SessionStore } from '@kode/session'
import { createPostgresSessionStore } from '@kode/session-postgres'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'

// `list()` orders sessions that tie on both times by id, as the memory and file stores compare
// strings in JavaScript (by UTF-16 code unit). These tests run in a database whose default
// collation is ICU's en-US, as a database made on most hosts sorts (`en_US.UTF-8`): there, case,
// punctuation and accents sort otherwise. The test server itself is made with the C.UTF-8 locale,
// which sorts like JavaScript for these ids, so it would not tell the difference.

const database = `kode_test_icu_${randomUUID().replaceAll('-', '').slice(0, 12)}`
let admin: pg.Client
let url: string
let store: SessionStore | undefined
const memories: SessionStore[] = []

beforeAll(async () => {
  admin = new pg.Client({ connectionString: postgresUrl() })
  await admin.connect()
  await admin.query(
    `create database ${database} template template0 encoding 'UTF8' locale_provider icu icu_locale 'en-US' locale 'C.UTF-8'`,
  )
  const target = new URL(postgresUrl())
  target.pathname = `/${database}`
  url = target.href
})
afterEach(async () => {
  await Promise.all([store, ...memories.splice(0)].map((s) => s?.close()))
  store = undefined
})
// Each test's sessions go into a schema of its own; the database goes with all of them.
afterAll(async () => {
  await admin.query(`drop database if exists ${database} with (force)`)
  await admin.end()
})

// Every character a session id may hold, in mixed case, with punctuation where it may stand.
const ids = ['a', 'B', 'b', 'A', '_x', 'a_b', 'a-b', 'a.b', 'a0', 'Z9', '9', 'ab', 'aB', 'a--', 'x.y-z', 'A_']

/** The same sessions, all created at one time, in the memory store and a Postgres store. */
async function bothStores(): Promise<[SessionStore, SessionStore]> {
  const clock = { now: () => 1000 }
  const memory = createMemorySessionStore(clock)
  memories.push(memory)
  store = createPostgresSessionStore({ connectionString: url, schema: freshSchema(), ...clock })
  for (const id of ids) {
    await memory.create({ id, parentSessionId: 'p' })
    await store.create({ id, parentSessionId: 'p' })
  }
  return [memory, store]
}

const idsOf = (infos: SessionInfo[]) => infos.map((info) => info.id)

test('the database sorts these ids otherwise than JavaScript does', async () => {
  const { rows } = await admin.query(`select $1::text < $2::text as less`, ['B', 'a'])
  expect(rows[0]).toEqual({ less: true })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    expect((await client.query(`select $1::text < $2::text as less`, ['B', 'a'])).rows[0]).toEqual({
      less: false,
    })
  } finally {
    await client.end()
  }
})

test('ties on both times come in JavaScript string order, as in the memory store', async () => {
  const [memory, postgres] = await bothStores()
  const expected = [...ids].sort()
  expect(idsOf(await memory.list())).toEqual(expected)
  expect(idsOf(await postgres.list())).toEqual(expected)
  expect(idsOf(await postgres.list({ parentSessionId: 'p' }))).toEqual(expected)
})

test('every page of every size, with and without a parent, comes as in the memory store', async () => {
  const [memory, postgres] = await bothStores()
  for (const parentSessionId of [undefined, 'p']) {
    for (let limit = 1; limit <= ids.length; limit++) {
      const walk = async (s: SessionStore) => {
        const pages: string[][] = []
        let page = await s.list({ parentSessionId, limit })
        for (let reads = 1; reads <= ids.length + 1; reads++) {
          pages.push(idsOf(page))
          if (page.length < limit) break
          page = await s.list({ parentSessionId, limit, after: page.at(-1)! })
        }
        return pages
      }
      expect(await walk(postgres)).toEqual(await walk(memory))
    }
  }
})

test('a cursor id of any text, non-ASCII included, starts the page where the memory store does', async () => {
  const [memory, postgres] = await bothStores()
  // Accented and other non-ASCII letters, one outside the BMP, a lone surrogate, a NUL (which no
  // Postgres text holds), the empty string.
  const cursors = [
    'aé',
    'É',
    'Ab',
    'a\u{1F600}',
    'a\uFFFF',
    'a\uD800',
    'a\u0000b',
    'a-\u0000',
    '\u0000',
    'ß',
    '',
  ]
  for (const parentSessionId of [undefined, 'p']) {
    for (const id of cursors) {
      for (const limit of [undefined, 2]) {
        const after = { updatedAt: 1000, createdAt: 1000, id }
        const want = idsOf(await memory.list({ parentSessionId, after, limit }))
        expect({ id, got: idsOf(await postgres.list({ parentSessionId, after, limit })) }).toEqual({
          id,
          got: want,
        })
      }
    }
  }
})
