import type { HistoryEvent } from '@kode/protocol'
import { SessionError } from '@kode/session'
import {
  createPostgresSessionStore,
  type PostgresFollowedRecord,
  type PostgresSessionStore,
} from '@kode/session-postgres'
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { dropSchema, freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'

// A follower of a session that does not exist yet (`untilCreated`): it waits for the session on
// the store's notifications instead of failing, and hears of one created and deleted meanwhile.

let schema: string
let admin: pg.Pool
const stores: PostgresSessionStore[] = []
const open = () => {
  const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
  stores.push(store)
  return store
}
const record = (id: string): HistoryEvent => ({ role: 'user', id, createdAt: 1, parts: [] })

beforeEach(() => {
  schema = freshSchema()
  admin = new pg.Pool({ connectionString: postgresUrl(), max: 1 })
})
afterEach(async () => {
  await Promise.allSettled(stores.splice(0).map((s) => s.close()))
  await admin.end()
  await dropSchema(schema)
})

/** Resolves once the store's follower listens for notifications (its LISTEN connection is up). */
async function listening(): Promise<void> {
  const query = `listen "${schema}_records"`
  for (let tries = 0; tries < 500; tries++) {
    const found = await admin.query('select 1 from pg_stat_activity where query = $1', [query])
    if (found.rowCount) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('the follower never listened')
}

/** The follow's next step, or `'waiting'` if it has none within `ms`. */
async function nextWithin(feed: AsyncIterator<PostgresFollowedRecord>, ms: number) {
  const timeout = new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), ms).unref())
  return Promise.race([feed.next().catch((error: unknown) => ({ error })), timeout])
}

/** The records a follow yields until it fails (within 5 s), and its error. */
async function drain(feed: AsyncIterator<PostgresFollowedRecord>) {
  const seen: string[] = []
  for (;;) {
    const step = await nextWithin(feed, 5_000)
    if (step === 'waiting' || 'error' in step) return { seen, error: step === 'waiting' ? step : step.error }
    if (step.done) return { seen, error: undefined }
    seen.push(step.value.record.id)
  }
}

describe('following a session not created yet, with untilCreated', () => {
  test('waits for it, then yields its records from the first', async () => {
    const [a, b] = [open(), open()]
    const abort = new AbortController()
    const feed = a.follow('s', { untilCreated: true, signal: abort.signal })[Symbol.asyncIterator]()
    const first = feed.next()
    await listening()
    await b.create({ id: 's' })
    await b.append('s', [record('r0'), record('r1')])
    expect(await first).toMatchObject({ value: { index: 0, record: { id: 'r0' } } })
    expect(await feed.next()).toMatchObject({ value: { index: 1, record: { id: 'r1' } } })
    abort.abort()
    expect(await feed.next()).toMatchObject({ done: true })
  })

  test('one created and deleted while waited for fails the follow with session_not_found', async () => {
    const [a, b] = [open(), open()]
    const feed = a.follow('s', { untilCreated: true })[Symbol.asyncIterator]()
    const steps = drain(feed)
    await listening()
    await b.create({ id: 's' })
    await b.append('s', [record('r0')])
    await b.delete('s')
    // The follower may have read the record before the delete: then it fails as any follower of
    // a deleted session does.
    const { seen, error } = await steps
    expect(seen.every((id) => id === 'r0')).toBe(true)
    expect(error).toMatchObject({ code: 'session_not_found' })
  })

  test('one created empty and deleted while waited for fails it too: the delete is heard', async () => {
    const [a, b] = [open(), open()]
    const feed = a.follow('s', { untilCreated: true })[Symbol.asyncIterator]()
    const steps = drain(feed)
    await listening()
    // Creating notifies nothing, so only the delete wakes the follower, which finds no session.
    await b.create({ id: 's' })
    await b.delete('s')
    const { seen, error } = await steps
    expect(seen).toEqual([])
    expect(SessionError.is(error) && error.code).toBe('session_not_found')
    expect((error as Error).message).toBe(
      'session s was deleted (or deleted and created again under its id) while its creation was awaited',
    )
  })

  test('with the incarnation of a session seen before, a missing session fails at once, as without', async () => {
    const [a, b] = [open(), open()]
    await b.create({ id: 's' })
    await b.append('s', [record('r0')])
    const { incarnation } = await a.readWithIncarnation('s')
    await b.delete('s')
    const feed = a.follow('s', { untilCreated: true, incarnation, from: 1 })[Symbol.asyncIterator]()
    expect(await nextWithin(feed, 5_000)).toMatchObject({ error: { code: 'session_not_found' } })
  })

  test('without untilCreated, a missing session fails at once', async () => {
    const feed = open().follow('s')[Symbol.asyncIterator]()
    expect(await nextWithin(feed, 5_000)).toMatchObject({ error: { code: 'session_not_found' } })
  })
})
