import { createRequire } from 'node:module'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import type { HistoryEvent } from '@kode/protocol'
import {
  exportSessionHtml,
  replaySession,
  SessionError,
  SessionLockedError,
  type SessionStore,
  type StoreWarning,
} from '@kode/session'
import {
  createPostgresSessionStore,
  DEFAULT_MAX_RECORD_BYTES,
  type PostgresFollowedRecord,
  type PostgresSessionStoreOptions,
  SessionAppendInterruptedError,
  SessionLeasedError,
  SessionLeaseLostError,
  schemaStatements,
} from '@kode/session-postgres'
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { startCuttingProxy } from '../../../test/postgres/cutting-proxy.js'
import { dropSchema, freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'

// What the Postgres store adds to the shared contract: leases across stores (hosts) with a
// fencing epoch, the per-record size limit, the schema it creates, and who owns the pool.

let schema: string
let admin: pg.Pool
const stores: SessionStore[] = []
const open = (options: Partial<PostgresSessionStoreOptions> = {}) => {
  const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema, ...options })
  stores.push(store)
  return store
}
const record = (id: string, text = ''): HistoryEvent => ({
  role: 'user',
  id,
  createdAt: 1,
  parts: text ? [{ type: 'text', text }] : [],
})
/** Ends a lease by the database's clock, as if its writer had stopped renewing it long ago. */
const expire = (sessionId: string) =>
  admin.query(`update "${schema}".sessions set lease_expires_at = now() - interval '1 hour' where id = $1`, [
    sessionId,
  ])

beforeEach(() => {
  schema = freshSchema()
  admin = new pg.Pool({ connectionString: postgresUrl(), max: 2 })
})
afterEach(async () => {
  await Promise.allSettled(stores.splice(0).map((s) => s.close()))
  await admin.end()
  await dropSchema(schema)
})

/** The first `n` records a feed yields. */
const take = async (feed: AsyncIterable<PostgresFollowedRecord>, n: number) => {
  const got: PostgresFollowedRecord[] = []
  if (n === 0) return got
  for await (const item of feed) {
    got.push(item)
    if (got.length === n) break
  }
  return got
}

/** Another host deletes the session `s` and creates it again with `records`. */
async function replace(store: SessionStore, records: string[]) {
  await store.delete('s')
  await store.create({ id: 's' })
  await store.append(
    's',
    records.map((id) => record(id)),
  )
}

describe('leases across hosts', () => {
  test('another store holding the lease refuses writers with who holds it and until when', async () => {
    const [a, b] = [open(), open()]
    await a.create({ id: 's' })
    const lease = await a.acquire('s')
    for (const attempt of [b.acquire('s'), b.append('s', [record('x')]), b.delete('s')]) {
      const error = await attempt.catch((e: unknown) => e)
      expect(error).toBeInstanceOf(SessionLeasedError)
      expect(error).toBeInstanceOf(SessionLockedError)
      expect(error).toMatchObject({
        code: 'session_locked',
        owner: 'this-process',
        holder: { pid: process.pid },
      })
      expect((error as SessionLeasedError).expiresAt).toBeInstanceOf(Date)
      expect((error as Error).message).toMatch(
        /^session s is being written by process \d+ on .+ \(its lease runs until .+ unless renewed\): wait for its task to end; if that process died, its lease expires by itself and the next writer takes the session over$/,
      )
    }
    await lease.release()
    await b.append('s', [record('b')])
    expect((await a.read('s')).map((e) => e.id)).toEqual(['b'])
  })

  test('a lease taken over after it expired writes nothing: its whole batch is refused with session_lease_lost', async () => {
    const [a, b] = [open(), open()]
    await a.create({ id: 's' })
    const first = await a.acquire('s')
    await first.append([record('a1')])
    await expire('s')
    const second = await b.acquire('s')
    const error = await first.append([record('a2'), record('a3')]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SessionLeaseLostError)
    expect(error).toMatchObject({ code: 'session_lease_lost', sessionId: 's' })
    expect(SessionError.is(error)).toBe(true)
    await second.append([record('b1')])
    expect((await b.read('s')).map((e) => e.id)).toEqual(['a1', 'b1'])
    expect(await b.info('s')).toMatchObject({ recordCount: 2 })
    // Releasing the lost lease does not free the new writer's session.
    await first.release()
    expect(await a.append('s', [record('x')]).catch((e: SessionError) => e.code)).toBe('session_locked')
    await second.release()
  })

  test('a lease on a session deleted and created again is fenced off, also when the same store took the new session at the same epoch', async () => {
    const [a, b] = [open(), open()]
    await a.create({ id: 's' })
    // A task of store a holds the session, then stalls for longer than its lease.
    const stalled = await a.acquire('s')
    await stalled.append([record('old')])
    await expire('s')
    // Another host deletes the session and creates it again; a second task of store a takes it.
    await b.delete('s')
    await b.create({ id: 's' })
    const current = await a.acquire('s')
    expect(current.sessionId).toBe('s')
    const error = await stalled.append([record('late')]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SessionLeaseLostError)
    await current.append([record('new')])
    expect((await b.read('s')).map((e) => e.id)).toEqual(['new'])
    // Releasing the stalled lease leaves the new writer's lease in place.
    await stalled.release()
    expect(await b.append('s', [record('x')]).catch((e: SessionError) => e.code)).toBe('session_locked')
    await current.release()
  })

  test('each acquire bumps the epoch; a plain append fences off an expired lease too', async () => {
    const store = open()
    await store.create({ id: 's' })
    const epochs: number[] = []
    for (let i = 0; i < 3; i++) {
      const lease = await store.acquire('s')
      epochs.push((lease as unknown as { epoch: number }).epoch)
      await lease.release()
    }
    expect(epochs).toEqual([epochs[0], epochs[0]! + 1, epochs[0]! + 2])
    const stale = await open().acquire('s')
    await expire('s')
    await store.append('s', [record('plain')])
    expect(await stale.append([record('late')]).catch((e: SessionError) => e.code)).toBe('session_lease_lost')
    expect((await store.read('s')).map((e) => e.id)).toEqual(['plain'])
  })

  test("a live lease renews itself by the database's clock while its writer runs", async () => {
    const a = open({ leaseMs: 150 })
    await a.create({ id: 's' })
    const lease = await a.acquire('s')
    const { rows } = await admin.query(`select lease_expires_at from "${schema}".sessions`)
    const first = rows[0].lease_expires_at as Date
    // Wait for a renewal by the database's clock (polling, not a fixed sleep).
    for (;;) {
      const again = await admin.query(`select lease_expires_at from "${schema}".sessions`)
      if ((again.rows[0].lease_expires_at as Date).getTime() > first.getTime()) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await lease.append([record('kept')])
    await lease.release()
  })

  test('close() releases the leases the store holds', async () => {
    const [a, b] = [open(), open()]
    await a.create({ id: 's' })
    await a.acquire('s')
    await a.close()
    await (await b.acquire('s')).release()
  })
})

describe('limits and validation', () => {
  test('a record over maxRecordBytes fails the whole append with record_too_large', async () => {
    const store = open({ maxRecordBytes: 1000 })
    await store.create({ id: 's' })
    await store.append('s', [record('fits', 'x'.repeat(800))])
    const error = await store
      .append('s', [record('ok'), record('big', 'x'.repeat(1000))])
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'record_too_large', sessionId: 's' })
    expect((error as Error).message).toMatch(
      /^record 1 of 2 appended to s is \d+ bytes encoded, over this store's limit of 1000 bytes \(maxRecordBytes\): nothing was written/,
    )
    expect((await store.read('s')).map((e) => e.id)).toEqual(['fits'])
  })

  test('a large batch of records full of quotes is stored whole', async () => {
    const store = open()
    await store.create({ id: 's' })
    // 30 records of 6 MB of `x"` (each under maxRecordBytes): pg's escaping of an array this
    // size ran the process out of memory.
    const text = 'x"'.repeat(2_000_000)
    const batch = Array.from({ length: 30 }, (_, i) => record(`r${i}`, text))
    await store.append('s', batch)
    const stored = await store.read('s')
    expect(stored.map((e) => e.id)).toEqual(batch.map((e) => e.id))
    expect(
      stored.every((e) => JSON.stringify(e) === JSON.stringify(batch[0]).replace('"r0"', `"${e.id}"`)),
    ).toBe(true)
  }, 120_000)

  test('a batch too large for one append fails whole with record_too_large', async () => {
    const store = open()
    await store.create({ id: 's' })
    // 70 records of 8 MB: 560 MB together, more than one statement can carry.
    const text = 'x'.repeat(8_000_000)
    const batch = Array.from({ length: 70 }, (_, i) => record(`r${i}`, text))
    const error = await store.append('s', batch).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'record_too_large', sessionId: 's' })
    expect((error as Error).message).toMatch(
      /^the 70 records appended to s are \d+ bytes encoded together, more than one append can carry: nothing was written; append them in smaller batches$/,
    )
    expect(await store.read('s')).toEqual([])
  }, 120_000)

  test('records full of quotes and backslashes are stored as they are', async () => {
    const store = open()
    await store.create({ id: 's' })
    const awkward = [
      '"',
      '\\',
      '\\"',
      '{"a":"b\\"}',
      ',',
      '{',
      '}',
      'NULL',
      '\\u0000',
      '\u2028',
      '\ud83d\ude00',
      '\ud800',
    ]
    const batch = awkward.map((text, i) => record(`q${i}`, text.repeat(1000)))
    await store.append('s', batch)
    expect(await store.read('s')).toEqual(batch)
  })

  test('the store says its limit, so a host can refuse a record too large before it starts anything', () => {
    expect(open({ maxRecordBytes: 1000 }).maxRecordBytes).toBe(1000)
    expect(open().maxRecordBytes).toBe(DEFAULT_MAX_RECORD_BYTES)
  })

  test('options are checked when the store is made', () => {
    const url = postgresUrl()
    expect(() => createPostgresSessionStore({})).toThrow('exactly one of `pool` and `connectionString`')
    const pool = new pg.Pool({ connectionString: url })
    expect(() => createPostgresSessionStore({ pool, connectionString: url })).toThrow(TypeError)
    expect(() => createPostgresSessionStore({ pool, schema: 'x"; drop table y; --' })).toThrow(
      'invalid schema name',
    )
    // Postgres keeps `pg_` names for itself; it would refuse the schema only on first use.
    expect(() => createPostgresSessionStore({ pool, schema: 'pg_sessions' })).toThrow(
      'invalid schema name "pg_sessions": use 1-63 characters from a-z 0-9 _, not starting with a digit or pg_',
    )
    expect(() => createPostgresSessionStore({ pool, schema: 'kode_pg_sessions' })).not.toThrow()
    expect(() => createPostgresSessionStore({ pool, leaseMs: 0 })).toThrow('leaseMs')
    expect(() => createPostgresSessionStore({ pool, followPollMs: 0 })).toThrow('followPollMs')
    return pool.end()
  })

  test('a maxRecordBytes that is not a positive integer is refused, not taken as no limit', () => {
    const pool = new pg.Pool({ connectionString: postgresUrl() })
    for (const maxRecordBytes of [Number.NaN, 0, -1, 1.5, Number.POSITIVE_INFINITY]) {
      expect(() => createPostgresSessionStore({ pool, maxRecordBytes })).toThrow('maxRecordBytes')
    }
    return pool.end()
  })
})

describe('a stored record that does not decode', () => {
  // A row hand-edited, or written by a newer Kode during a rolling upgrade: valid JSON, not a
  // record this version can read.
  const plant = async (text: string) => {
    const store = open()
    await store.create({ id: 's' })
    await store.append('s', [record('a'), record('b')])
    await admin.query(`update "${schema}".records set record = $1 where session_id = 's' and seq = 2`, [text])
    return store
  }
  const corrupt = (seq: number) => ({ code: 'corrupt_history', sessionId: 's', seq })

  test.each([
    ['valid JSON but not a record', '{"v":1,"role":"user"}'],
    ['a record of a newer format version', '{"v":99,"role":"user","id":"b","createdAt":1,"parts":[]}'],
  ])(
    '%s fails read, readBatches and follow with corrupt_history naming it, and changes nothing',
    async (_, text) => {
      const store = await plant(text)
      const read = await store.read('s').catch((e: unknown) => e)
      expect(SessionError.is(read)).toBe(true)
      expect(read).toMatchObject(corrupt(2))
      const batches: HistoryEvent[][] = []
      const batched = await (async () => {
        for await (const batch of store.readBatches('s', { batchSize: 1 })) batches.push(batch)
      })().catch((e: unknown) => e)
      expect(batched).toMatchObject(corrupt(2))
      expect(batches.map((b) => b.map((e) => e.id))).toEqual([['a']])
      const followed = await take(store.follow!('s'), 2).catch((e: unknown) => e)
      expect(followed).toMatchObject(corrupt(2))
      const { rows } = await admin.query(
        `select record from "${schema}".records where session_id = 's' order by seq`,
      )
      expect(rows.map((r) => r.record)).toHaveLength(2)
      expect(rows[1].record).toBe(text)
    },
  )
})

describe('metadata jsonb cannot hold as such', () => {
  // jsonb refuses a NUL character and a lone surrogate, though a title may hold either: a prompt
  // pasted with a NUL in it, or one cut in the middle of an emoji to make a title.
  const odd = [
    'nul \u0000 inside',
    'cut emoji \ud83d',
    '\ude00 lone low',
    'line\u2028separator',
    '\\u0000 escaped',
  ]

  test('a title, model, provider or link with any text is stored and read back exactly, as the file store does', async () => {
    const store = open()
    for (const [i, text] of odd.entries()) {
      const created = await store.create({
        id: `s${i}`,
        title: text,
        parentSessionId: text,
        subAgent: { name: text, parentToolCallId: text },
        forkedFrom: { sessionId: 'src', messageId: text },
        model: text,
        provider: text,
      })
      expect(created).toMatchObject({
        title: text,
        subAgent: { name: text },
        forkedFrom: { messageId: text },
      })
      expect(await store.info(`s${i}`)).toEqual(created)
      const updated = await store.update(`s${i}`, { title: `${text}!`, model: `${text}?` })
      expect(updated).toEqual({ ...created, title: `${text}!`, model: `${text}?` })
      expect(await open().info(`s${i}`)).toEqual(updated)
    }
    expect((await store.list()).map((info) => info.title).sort()).toEqual(odd.map((t) => `${t}!`).sort())
  })

  test('a plain title stays a plain jsonb string, so rows written before read the same', async () => {
    const store = open()
    await store.create({ id: 's', title: 'plain', subAgent: { name: 'sub' } })
    const { rows } = await admin.query(`select meta from "${schema}".sessions where id = 's'`)
    expect(rows[0].meta).toEqual({ title: 'plain', subAgent: { name: 'sub' } })
  })
})

describe('metadata of the wrong shape', () => {
  // A row edited by hand, or by a tool outside Kode: the meta column is jsonb, so it holds any JSON.
  const plant = async (meta: string) => {
    const warnings: StoreWarning[] = []
    const store = open({ onWarning: (warning) => warnings.push(warning) })
    await store.create({ id: 'good', title: 'fine' })
    await store.create({ id: 's', title: 'before' })
    await admin.query(`update "${schema}".sessions set meta = $1::jsonb where id = 's'`, [meta])
    return { store, warnings }
  }
  const shapes = [
    ['JSON null', 'null'],
    ['an array', '[]'],
    ['a string', '"title"'],
    ['a title that is not a string', '{"title": 5}'],
    ['a malformed sub-agent link', '{"subAgent": {"parentToolCallId": 1}}'],
    ['a wrapped string that is not JSON', '{"title": {"kode:json": "not json"}}'],
  ]

  test.each(shapes)('%s fails info with corrupt_metadata naming the session', async (_, meta) => {
    const { store } = await plant(meta)
    const error = await store.info('s').catch((e: unknown) => e)
    expect(SessionError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'corrupt_metadata', sessionId: 's' })
  })

  test.each(shapes)(
    '%s is left out of list, reported as unreadable_session, as the file store does',
    async (_, meta) => {
      const { store, warnings } = await plant(meta)
      expect((await store.list()).map((info) => info.id)).toEqual(['good'])
      expect(warnings).toEqual([
        {
          type: 'unreadable_session',
          sessionId: 's',
          file: `${schema}.sessions`,
          error: expect.objectContaining({ code: 'corrupt_metadata', sessionId: 's' }),
        },
      ])
    },
  )

  test('an onWarning that throws fails nothing: list still answers without the session', async () => {
    const seen: StoreWarning[] = []
    const store = open({
      onWarning: (warning) => {
        seen.push(warning)
        throw new Error('the logger is down')
      },
    })
    await store.create({ id: 'good', title: 'fine' })
    await store.create({ id: 's', title: 'before' })
    await admin.query(`update "${schema}".sessions set meta = 'null'::jsonb where id = 's'`)
    expect((await store.list()).map((info) => info.id)).toEqual(['good'])
    expect(seen).toMatchObject([{ type: 'unreadable_session', sessionId: 's' }])
  })

  test('update of an object meta with a bad field the patch does not fix changes nothing', async () => {
    const meta = '{"subAgent": {"parentToolCallId": 1}}'
    const { store } = await plant(meta)
    const error = await store.update('s', { title: 'after' }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'corrupt_metadata', sessionId: 's' })
    const { rows } = await admin.query(`select meta from "${schema}".sessions where id = 's'`)
    expect(rows[0].meta).toEqual(JSON.parse(meta))
    // A patch that does put the row right is kept.
    await admin.query(`update "${schema}".sessions set meta = '{"title": 5}'::jsonb where id = 's'`)
    expect(await store.update('s', { title: 'fixed' })).toMatchObject({ id: 's', title: 'fixed' })
  })

  test('update fails with corrupt_metadata and changes nothing; delete still removes the session', async () => {
    const { store } = await plant('null')
    const error = await store.update('s', { title: 'after' }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'corrupt_metadata', sessionId: 's' })
    const { rows } = await admin.query(`select meta from "${schema}".sessions where id = 's'`)
    expect(rows[0].meta).toBeNull()
    await store.delete('s')
    expect(await store.info('s')).toBeUndefined()
    expect((await store.list()).map((info) => info.id)).toEqual(['good'])
  })
})

describe('follow across hosts', () => {
  test('a session deleted and created again under its id ends its followers with session_not_found', async () => {
    const [a, b] = [open(), open()]
    await a.create({ id: 's' })
    await a.append('s', [record('old0'), record('old1')])
    const feed = a.follow('s')[Symbol.asyncIterator]()
    expect((await feed.next()).value).toMatchObject({ index: 0, record: { id: 'old0' } })
    // While the follower's reader is busy, another host replaces the session.
    await replace(b, ['new0', 'new1', 'new2'])
    const seen: string[] = []
    const error = await (async () => {
      for (;;) {
        const waited = new Promise<never>((_, reject) => {
          setTimeout(() => reject(new Error(`still following after ${seen.join(', ')}`)), 3_000).unref()
        })
        const next = await Promise.race([feed.next(), waited])
        if (next.done) return undefined
        seen.push(next.value.record.id)
      }
    })().catch((e: unknown) => e)
    expect(SessionError.is(error) && error.code).toBe('session_not_found')
    expect((error as Error).message).toBe(
      'session s was deleted (or deleted and created again under its id) since it was followed; read it again',
    )
    // What the follower had read of the old session may still come; nothing of the new one does.
    expect(seen.filter((id) => id.startsWith('new'))).toEqual([])
  })
})

describe('a notification connection that dies silently', () => {
  test('is found dead and replaced: a record appended after that reaches the follower before its next poll', async () => {
    const proxy = await startCuttingProxy(postgresUrl())
    try {
      // Its safety-net read is ten minutes away: only a notification, or a connection found lost,
      // brings the record in time.
      const follower = open({ connectionString: proxy.url, followPollMs: 600_000 })
      const writer = open()
      await writer.create({ id: 's' })
      await writer.append('s', [record('a')])
      const feed = follower.follow('s')[Symbol.asyncIterator]()
      expect((await feed.next()).value).toMatchObject({ index: 0, record: { id: 'a' } })
      /** The next record, asked for once the follower read all there is and waits (it looked the session up). */
      const waiting = async () => {
        const looked = proxy.sent(`select * from "${schema}".sessions where id = $1`)
        const next = feed.next()
        while (proxy.sent(`select * from "${schema}".sessions where id = $1`) === looked)
          await new Promise((resolve) => setTimeout(resolve, 10))
        // Wrapped: returned bare, the promise would be awaited with this function's.
        return { next }
      }
      // Its LISTEN is in place (it listens before it waits) and a notification brings a record.
      let { next } = await waiting()
      await writer.append('s', [record('b')])
      expect((await next).value).toMatchObject({ index: 1, record: { id: 'b' } })
      ;({ next } = await waiting())
      // The network path of that connection dies with no reset to either side: the follower's host
      // hears nothing more on it, and nothing tells it the connection is gone.
      proxy.stallListening()
      await writer.append('s', [record('c')])
      expect((await next).value).toMatchObject({ index: 2, record: { id: 'c' } })
      await feed.return?.()
      // Closing does not wait on the dead connection.
      await follower.close()
    } finally {
      await proxy.close()
    }
  }, 60_000)
})

describe('a follower restarting from a position', () => {
  test('each followed record names its session incarnation, which a restart with from passes back', async () => {
    const store = open()
    await store.create({ id: 's' })
    await store.append('s', [record('a'), record('b')])
    const seen = await take(store.follow('s'), 2)
    const incarnation = seen[0]!.incarnation
    expect(typeof incarnation).toBe('string')
    expect(seen[1]!.incarnation).toBe(incarnation)
    await store.append('s', [record('c')])
    const resumed = await take(store.follow('s', { from: 2, incarnation }), 1)
    expect(resumed.map((r) => [r.index, r.record.id, r.incarnation])).toEqual([[2, 'c', incarnation]])
  })

  test('a restart with from and the incarnation seen fails with session_not_found once the session was created again', async () => {
    const [a, b] = [open(), open()]
    await a.create({ id: 's' })
    await a.append('s', [record('old0'), record('old1')])
    const [, last] = await take(a.follow('s'), 2)
    const { incarnation } = last!
    // While the follower is stopped, another host replaces the session: a longer history, then a shorter one.
    for (const replacement of [['new0', 'new1', 'new2', 'new3'], ['new0']]) {
      await replace(b, replacement)
      const error = await take(a.follow('s', { from: 2, incarnation }), 1).catch((e: unknown) => e)
      expect(SessionError.is(error) && error.code).toBe('session_not_found')
      expect((error as Error).message).toMatch(
        /^session s was deleted \(or deleted and created again under its id\) since it was followed/,
      )
    }
  })

  test('an incarnation that is not a string is refused', async () => {
    const store = open()
    await store.create({ id: 's' })
    const follow = store.follow('s', { incarnation: 42 as unknown as string })
    await expect(take(follow, 1)).rejects.toThrow(TypeError)
  })
})

describe('a read that names its incarnation', () => {
  /** The session's incarnation as the table holds it now. */
  const incarnationNow = async (sessionId: string) =>
    (await admin.query(`select incarnation from "${schema}".sessions where id = $1`, [sessionId])).rows[0]
      ?.incarnation as string | undefined

  test('readWithIncarnation returns the history and the incarnation its follow names; a missing session fails', async () => {
    const store = open()
    await store.create({ id: 'empty' })
    const empty = await store.readWithIncarnation('empty')
    expect(empty).toEqual({ history: [], incarnation: await incarnationNow('empty') })
    await store.create({ id: 's' })
    await store.append('s', [record('a'), record('b')])
    const { history, incarnation } = await store.readWithIncarnation('s')
    expect(history.map((event) => event.id)).toEqual(['a', 'b'])
    expect(incarnation).not.toBe(empty.incarnation)
    const [followed] = await take(store.follow('s'), 1)
    expect(followed!.incarnation).toBe(incarnation)
    const error = await store.readWithIncarnation('missing').catch((e: unknown) => e)
    expect(SessionError.is(error) && error.code).toBe('session_not_found')
  })

  test('the history and the incarnation agree when another host replaces the session between the statements of the read', async () => {
    // The host's pool: after each statement of the read, before the store sees its result, another
    // host deletes the session and creates it again with fewer records. A read made of several
    // statements would pair one session's records with the other's incarnation.
    const pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 })
    const store = createPostgresSessionStore({ pool, schema })
    const other = open()
    await store.create({ id: 's' })
    await store.append('s', [record('old0'), record('old1'), record('old2')])
    const incarnations = [await incarnationNow('s')]
    let racing = false
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<pg.QueryResult>
    vi.spyOn(pool, 'query').mockImplementation((async (...args: unknown[]) => {
      const result = await query(...args)
      if (racing) {
        await other.delete('s')
        await other.create({ id: 's' })
        await other.append('s', [record(`new${incarnations.length}`)])
        incarnations.push(await incarnationNow('s'))
      }
      return result
    }) as never)
    racing = true
    const read = await store.readWithIncarnation('s')
    racing = false
    await store.close()
    await pool.end()

    // The race happened, and the read is one session's whole: its records with its incarnation.
    expect(incarnations.length).toBeGreaterThan(1)
    const which = incarnations.indexOf(read.incarnation)
    expect(which).toBeGreaterThanOrEqual(0)
    expect(read.history.map((event) => event.id)).toEqual(
      which === 0 ? ['old0', 'old1', 'old2'] : [`new${which}`],
    )
  })

  test('a follow from the end of such a read, with its incarnation, fails once the session was created again with fewer records', async () => {
    const [a, b] = [open(), open()]
    await a.create({ id: 's' })
    await a.append('s', [record('old0'), record('old1'), record('old2')])
    const { history, incarnation } = await a.readWithIncarnation('s')
    await replace(b, ['new0'])
    const error = await take(a.follow('s', { from: history.length, incarnation }), 1).catch((e: unknown) => e)
    expect(SessionError.is(error) && error.code).toBe('session_not_found')
  })
})

describe('batched reads across hosts', () => {
  test('a session deleted and created again during readBatches fails it, never yielding the new records', async () => {
    const [a, b] = [open(), open()]
    await a.create({ id: 's' })
    await a.append('s', [record('old0'), record('old1'), record('old2')])
    const seen: string[] = []
    const error = await (async () => {
      for await (const batch of a.readBatches('s', { batchSize: 1 })) {
        seen.push(...batch.map((event) => event.id))
        if (seen.length === 1) {
          await replace(b, ['new0', 'new1', 'new2'])
        }
      }
    })().catch((e: unknown) => e)
    expect(seen).toEqual(['old0'])
    expect(SessionError.is(error) && error.code).toBe('session_not_found')
  })

  /**
   * A store on a host's pool whose `after`-th statement from `race()` on, before the store sees
   * its result, is followed by `action` (another host replacing the session, say): a race between
   * two statements of one operation, made to happen every time.
   */
  const racedStore = (after: number, action: () => Promise<void>) => {
    const pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 })
    const store = createPostgresSessionStore({ pool, schema })
    let count: number | undefined
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<pg.QueryResult>
    vi.spyOn(pool, 'query').mockImplementation((async (...args: unknown[]) => {
      const result = await query(...args)
      if (count !== undefined && ++count === after) await action()
      return result
    }) as never)
    return {
      store,
      race: () => {
        count = 0
      },
      close: async () => {
        await store.close()
        await pool.end()
      },
    }
  }

  test('a session replaced between the record count and the first page fails readBatches, yielding nothing of the new session', async () => {
    // The new session longer than the old one (its first records would pass for the old history),
    // then shorter (its records would run out before the count read).
    for (const replacement of [['new0', 'new1', 'new2', 'new3', 'new4'], ['new0']]) {
      const other = open()
      const raced = racedStore(1, () => replace(other, replacement))
      await raced.store.create({ id: 's' })
      await raced.store.append('s', [record('old0'), record('old1'), record('old2')])
      raced.race()
      const seen: string[] = []
      const error = await (async () => {
        for await (const batch of raced.store.readBatches('s', { batchSize: 2 })) {
          seen.push(...batch.map((event) => event.id))
        }
      })().catch((e: unknown) => e)
      await raced.close()
      await other.delete('s')
      expect([replacement.length, seen]).toEqual([replacement.length, []])
      expect(SessionError.is(error) && error.code).toBe('session_not_found')
      expect((error as Error).message).toBe(
        'session s was deleted (or deleted and created again under its id) during a batched read of its history; read it again',
      )
    }
  })

  test('a session created again with the same first record during readBatches fails it, never mixing the two histories', async () => {
    // A re-created session may start with the very record the reader read last (the same import,
    // the same first message): only the incarnation tells the two histories apart.
    const [a, b] = [open(), open()]
    await a.create({ id: 's' })
    await a.append('s', [record('old0'), record('old1'), record('old2')])
    const seen: string[] = []
    const error = await (async () => {
      for await (const batch of a.readBatches('s', { batchSize: 1 })) {
        seen.push(...batch.map((event) => event.id))
        if (seen.length === 1) await replace(b, ['old0', 'new1', 'new2'])
      }
    })().catch((e: unknown) => e)
    expect(seen).toEqual(['old0'])
    expect(SessionError.is(error) && error.code).toBe('session_not_found')
  })

  test('replaySession and exportSessionHtml of a session replaced during their read fail with session_not_found', async () => {
    const other = open()
    // replaySession reads through readBatches only; exportSessionHtml reads info first: the race
    // comes after readBatches' record count in both.
    const operations: [string, number, (store: SessionStore) => Promise<unknown>][] = [
      ['replaySession', 1, (store) => replaySession(store, 's', { batchSize: 2 })],
      ['exportSessionHtml', 2, (store) => exportSessionHtml(store, 's', { batchSize: 2 })],
    ]
    for (const [name, after, operation] of operations) {
      const raced = racedStore(after, () => replace(other, ['new0', 'new1', 'new2', 'new3']))
      await raced.store.create({ id: 's', title: 'old' })
      await raced.store.append('s', [record('old0'), record('old1'), record('old2')])
      raced.race()
      const error = await operation(raced.store).catch((e: unknown) => e)
      await raced.close()
      await other.delete('s')
      expect([name, SessionError.is(error) && error.code]).toEqual([name, 'session_not_found'])
    }
  })
})

describe('an append whose connection is lost', () => {
  /** A marker only the append statements carry. */
  const APPEND = 'with ordinality as r (record, ord)'

  test('an append committed whose acknowledgement was lost resolves, its records written once', async () => {
    const proxy = await startCuttingProxy(postgresUrl())
    try {
      const store = open({ connectionString: proxy.url })
      await store.create({ id: 's' })
      await store.append('s', [record('before')])
      proxy.arm(APPEND, 'after')
      await store.append('s', [record('a'), record('b')])
      const lease = await store.acquire('s')
      proxy.arm(APPEND, 'after')
      await lease.append([record('c')])
      await lease.release()
      expect(proxy.cuts()).toBe(2)
      expect((await store.read('s')).map((event) => event.id)).toEqual(['before', 'a', 'b', 'c'])
      expect(await store.info('s')).toMatchObject({ recordCount: 4 })
    } finally {
      await proxy.close()
    }
  })

  test('an append cut off before Postgres got it fails with append_interrupted, nothing written', async () => {
    const proxy = await startCuttingProxy(postgresUrl())
    try {
      const store = open({ connectionString: proxy.url })
      await store.create({ id: 's' })
      await store.append('s', [record('before')])
      for (const append of [
        () => store.append('s', [record('lost')]),
        async () => {
          const lease = await store.acquire('s')
          try {
            return await lease.append([record('lost')])
          } finally {
            await lease.release()
          }
        },
      ]) {
        proxy.arm(APPEND, 'before')
        const error = await append().catch((e: unknown) => e)
        expect(error).toBeInstanceOf(SessionAppendInterruptedError)
        expect(error).toMatchObject({ code: 'append_interrupted', sessionId: 's', written: false })
        expect(SessionError.is(error)).toBe(true)
      }
      expect(proxy.cuts()).toBe(2)
      expect((await store.read('s')).map((event) => event.id)).toEqual(['before'])
    } finally {
      await proxy.close()
    }
  })
  test('an append whose connection died silently fails after queryTimeoutMs with append_interrupted, nothing written', async () => {
    const proxy = await startCuttingProxy(postgresUrl())
    try {
      const store = open({ connectionString: proxy.url, queryTimeoutMs: 1_000 })
      await store.create({ id: 's' })
      await store.append('s', [record('before')])
      // The network path dies as the statement leaves: no answer and no reset ever come. Without a
      // timeout the append, and the task whose lease keeps renewing on other connections, would
      // wait for ever.
      proxy.arm(APPEND, 'stall')
      const error = await store.append('s', [record('lost')]).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(SessionAppendInterruptedError)
      expect(error).toMatchObject({ code: 'append_interrupted', sessionId: 's', written: false })
      expect((await store.read('s')).map((event) => event.id)).toEqual(['before'])
      await store.append('s', [record('after')])
      expect((await store.read('s')).map((event) => event.id)).toEqual(['before', 'after'])
    } finally {
      await proxy.close()
    }
  }, 30_000)

  test('a server that never answers the connection fails the call after queryTimeoutMs', async () => {
    // Accepts the connection and says nothing (a proxy whose backend is gone, a dead NAT path):
    // without a limit on getting a connection, every call of the store would wait for ever.
    const sockets = new Set<Socket>()
    const silent = createServer((socket) => sockets.add(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = silent.address() as AddressInfo
      const store = open({ connectionString: `postgres://kode@127.0.0.1:${port}/kode`, queryTimeoutMs: 500 })
      const error = await store.create({ id: 's' }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(Error)
      expect((error as Error).message).toMatch(/timeout/i)
      expect(sockets.size).toBeGreaterThan(0)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  }, 30_000)

  test('queryTimeoutMs is a positive integer, and only for a pool the store makes', () => {
    for (const queryTimeoutMs of [0, -1, 1.5, Number.NaN])
      expect(() => open({ queryTimeoutMs })).toThrow('queryTimeoutMs must be a positive integer')
    const pool = new pg.Pool({ connectionString: postgresUrl() })
    expect(() => createPostgresSessionStore({ pool, queryTimeoutMs: 1_000 })).toThrow(
      'queryTimeoutMs is for a pool the store makes',
    )
    return pool.end()
  })

  test("an error Postgres reports for an append is passed on, also through a host's pool of another copy of pg", async () => {
    // A host may bring its own pg (another version, another install): its errors are not
    // instances of this package's classes.
    const require = createRequire(import.meta.url)
    const loaded = Object.keys(require.cache).filter((key) => /[\\/]pg(-pool|-protocol)?[\\/]/.test(key))
    const cached = loaded.map((key) => [key, require.cache[key]] as const)
    for (const key of loaded) delete require.cache[key]
    const otherPg = require('pg') as typeof pg
    for (const [key, module] of cached) require.cache[key] = module
    expect(otherPg.Pool).not.toBe(pg.Pool)
    // A lock held elsewhere longer than the host allows its statements to wait for one.
    const url = new URL(postgresUrl())
    url.searchParams.set('options', '-c lock_timeout=100')
    for (const pool of [
      new pg.Pool({ connectionString: url.toString() }),
      new otherPg.Pool({ connectionString: url.toString() }),
    ]) {
      const store = createPostgresSessionStore({ pool, schema })
      try {
        const id = pool instanceof pg.Pool ? 'own' : 'other'
        await store.create({ id })
        const holder = await admin.connect()
        try {
          await holder.query('begin')
          await holder.query(`select 1 from "${schema}".sessions where id = $1 for update`, [id])
          const error = await store.append(id, [record('a')]).catch((e: unknown) => e)
          expect({ id, error }).toMatchObject({ id, error: { code: '55P03', severity: 'ERROR' } })
        } finally {
          await holder.query('rollback')
          holder.release()
        }
        expect(await store.read(id)).toEqual([])
      } finally {
        await store.close()
        await pool.end()
      }
    }
  })

  test("an append whose connection is lost with the database out of reach fails with written: 'unknown'", async () => {
    const proxy = await startCuttingProxy(postgresUrl())
    try {
      const store = open({ connectionString: proxy.url })
      await store.create({ id: 's' })
      proxy.arm(APPEND, 'after', 'down')
      const error = await store.append('s', [record('a')]).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(SessionAppendInterruptedError)
      expect(error).toMatchObject({ code: 'append_interrupted', sessionId: 's', written: 'unknown' })
      // It was committed: the store could not tell, and said so rather than "not written".
      expect((await open().read('s')).map((event) => event.id)).toEqual(['a'])
    } finally {
      await proxy.close()
    }
  })
})

describe('a connection the server ends in the middle of a transaction', () => {
  /**
   * Holds the session's row in a transaction of its own, so the store's next statement on it
   * waits; `end` lets it go.
   */
  async function holdRow(sessionId: string) {
    const holder = await admin.connect()
    await holder.query('begin')
    await holder.query(`select 1 from "${schema}".sessions where id = $1 for update`, [sessionId])
    return {
      end: async () => {
        await holder.query('rollback')
        holder.release()
      },
    }
  }
  /** Ends the backend running a statement that contains `marker` once it waits for the row. */
  async function terminateWaiting(marker: string) {
    for (;;) {
      const { rows } = await admin.query(
        `select pg_terminate_backend(pid) as ended from pg_stat_activity
          where wait_event_type = 'Lock' and position($1 in query) > 0 and pid <> pg_backend_pid()`,
        [marker],
      )
      if (rows.some((row) => row.ended === true)) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  test('an update whose transaction loses its connection fails, and the host keeps running', async () => {
    const store = open()
    await store.create({ id: 's', title: 'before' })
    const row = await holdRow('s')
    const update = store.update('s', { title: 'after' }).catch((e: unknown) => e)
    await terminateWaiting('meta = meta ||')
    const error = await update
    expect(error).toMatchObject({ code: '57P01' })
    await row.end()
    expect(await store.info('s')).toMatchObject({ title: 'before' })
    expect(await store.update('s', { title: 'again' })).toMatchObject({ title: 'again' })
  })

  test('a new connection the server ends as soon as it is ready fails the operation that took it, and the host keeps running', async () => {
    const proxy = await startCuttingProxy(postgresUrl())
    try {
      const store = open({ connectionString: proxy.url })
      // The store's first operation creates the schema in a transaction, on a new connection.
      proxy.endOnceReady()
      const error = await store.create({ id: 's' }).catch((e: unknown) => e)
      expect(proxy.cuts()).toBe(1)
      expect(error).toBeInstanceOf(Error)
      expect(SessionError.is(error)).toBe(false)
      await store.create({ id: 's', title: 't' })
      expect(await store.info('s')).toMatchObject({ title: 't' })
    } finally {
      await proxy.close()
    }
  })

  test('an interrupted append whose look loses its connection looks again on another one', async () => {
    const store = open()
    await store.create({ id: 's' })
    const row = await holdRow('s')
    const append = store.append('s', [record('a')]).catch((e: unknown) => e)
    // The append's statement, then the look that waits for it to let the row go.
    await terminateWaiting('with ordinality as r (record, ord)')
    await terminateWaiting('for share')
    await row.end()
    expect(await append).toMatchObject({ code: 'append_interrupted', written: false })
    await store.append('s', [record('b')])
    expect((await store.read('s')).map((event) => event.id)).toEqual(['b'])
  })
})

describe('a database whose transactions are serializable', () => {
  /** A store whose connections run every transaction serializable, as a database may be set to. */
  const serializable = () => {
    const url = new URL(postgresUrl())
    url.searchParams.set('options', '-c default_transaction_isolation=serializable')
    return open({ connectionString: url.href })
  }
  /**
   * Another host changes the session's row in a transaction; `commitOnceWaiting` commits it once
   * the store's statement containing `marker` waits for it. That statement's snapshot is then too
   * old to change the row, and Postgres fails it with a serialization failure.
   */
  async function changeRow(sessionId: string) {
    const other = await admin.connect()
    await other.query('begin')
    await other.query(`update "${schema}".sessions set lease_epoch = lease_epoch where id = $1`, [sessionId])
    return {
      async commitOnceWaiting(marker: string) {
        try {
          for (;;) {
            const { rows } = await admin.query(
              `select 1 from pg_stat_activity where wait_event_type = 'Lock' and position($1 in query) > 0
                and pid <> pg_backend_pid()`,
              [marker],
            )
            if (rows.length > 0) break
            await new Promise((resolve) => setTimeout(resolve, 10))
          }
          await other.query('commit')
        } finally {
          other.release()
        }
      },
    }
  }

  test('an append that meets a concurrent change of its session is made once, not failed', async () => {
    const store = serializable()
    await store.create({ id: 's' })
    const change = await changeRow('s')
    const append = store.append('s', [record('a')])
    await change.commitOnceWaiting('with ordinality as r (record, ord)')
    await append
    expect((await store.read('s')).map((event) => event.id)).toEqual(['a'])
  })

  test('an append through a lease that meets a concurrent change of its session is made once, not failed', async () => {
    const store = serializable()
    await store.create({ id: 's' })
    const lease = await store.acquire('s')
    const change = await changeRow('s')
    const append = lease.append([record('a')])
    await change.commitOnceWaiting('with ordinality as r (record, ord)')
    await append
    await lease.release()
    expect((await store.read('s')).map((event) => event.id)).toEqual(['a'])
  })

  test('an update that meets a concurrent change of its session is made, not failed', async () => {
    const store = serializable()
    await store.create({ id: 's', title: 'before' })
    const change = await changeRow('s')
    const update = store.update('s', { title: 'after' })
    await change.commitOnceWaiting('meta = meta ||')
    expect(await update).toMatchObject({ title: 'after' })
    expect(await store.info('s')).toMatchObject({ title: 'after' })
  })
})

describe('closing while operations are under way', () => {
  /** What a promise settles with, or a failure naming `what` if it has not settled in 5 s. */
  const settled = async (what: string, promise: Promise<unknown>) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} never settled after close()`)), 5_000)
    })
    try {
      return await Promise.race([
        promise.then(
          () => 'done',
          (error: unknown) => (SessionError.is(error) ? error.code : `not a SessionError: ${String(error)}`),
        ),
        hung,
      ])
    } finally {
      clearTimeout(timer)
    }
  }

  test('each operation called just before close() settles: done, or refused with store_closed', async () => {
    const operations: [string, (store: SessionStore, id: string) => Promise<unknown>][] = [
      ['create', (store, id) => store.create({ id: `${id}-new` })],
      ['append', (store, id) => store.append(id, [record('x')])],
      ['acquire', (store, id) => store.acquire(id)],
      ['read', (store, id) => store.read(id)],
      ['info', (store, id) => store.info(id)],
      ['update', (store, id) => store.update(id, { title: 't' })],
      ['list', (store) => store.list()],
      ['delete', (store, id) => store.delete(id)],
    ]
    for (const [name, operation] of operations) {
      const store = open()
      await store.create({ id: name })
      const pending = operation(store, name)
      await store.close()
      expect([name, await settled(name, pending)]).toEqual([
        name,
        expect.stringMatching(/^(done|store_closed)$/),
      ])
    }
  })

  test('a lease taken while the store closes is released by close(), so the session is free after', async () => {
    const store = open()
    await store.create({ id: 's' })
    const taking = store.acquire('s')
    await store.close()
    await settled('acquire', taking)
    await (await open().acquire('s')).release()
  })

  test('a follow or a batched read that starts as the store closes ends', async () => {
    const store = open()
    await store.create({ id: 's' })
    await store.append('s', [record('a')])
    const following = store.follow('s')[Symbol.asyncIterator]().next()
    const reading = store.readBatches('s')[Symbol.asyncIterator]().next()
    await store.close()
    expect(await settled('follow', following)).toBe('done')
    expect(await settled('readBatches', reading)).toMatch(/^(done|store_closed)$/)
  })
})

describe('schema and pool', () => {
  test('the schema, its tables and the indexes for list() are created on first use', async () => {
    const store = open()
    const exists = async () =>
      (await admin.query('select 1 from information_schema.schemata where schema_name = $1', [schema]))
        .rowCount
    expect(await exists()).toBe(0)
    await store.list()
    expect(await exists()).toBe(1)
    const { rows } = await admin.query('select indexname from pg_indexes where schemaname = $1 order by 1', [
      schema,
    ])
    expect(rows.map((r) => r.indexname)).toEqual([
      'records_pkey',
      'sessions_in_list_order',
      'sessions_of_parent_in_list_order',
      'sessions_pkey',
    ])
  })

  test('the indexes of earlier releases, which ordered ids by the database collation, are replaced on first use', async () => {
    const before = open()
    await before.create({ id: 'parent' })
    await before.create({ id: 'child', parentSessionId: 'parent', subAgent: { name: 'a' } })
    await before.close()
    // As an earlier release left them.
    await admin.query(`drop index "${schema}".sessions_in_list_order`)
    await admin.query(`drop index "${schema}".sessions_of_parent_in_list_order`)
    await admin.query(
      `create index sessions_by_update on "${schema}".sessions (updated_at desc, created_at desc, id)`,
    )
    await admin.query(`create index sessions_by_parent on "${schema}".sessions
      ((meta->'parentSessionId'), updated_at desc, created_at desc, id) where meta->'parentSessionId' is not null`)
    const store = open()
    expect((await store.list({ parentSessionId: 'parent' })).map((info) => info.id)).toEqual(['child'])
    const { rows } = await admin.query(
      `select indexname from pg_indexes where schemaname = $1 and indexname like 'sessions_%' order by 1`,
      [schema],
    )
    expect(rows.map((r) => r.indexname)).toEqual([
      'sessions_in_list_order',
      'sessions_of_parent_in_list_order',
      'sessions_pkey',
    ])
  })

  test('a sessions table made before incarnations gets the column on first use, a distinct value per session', async () => {
    // The tables as earlier releases made them, with a session in them.
    await admin.query(`create schema "${schema}"`)
    await admin.query(`create table "${schema}".sessions (
      id text primary key, meta jsonb not null default '{}', created_at bigint not null,
      updated_at bigint not null, record_count integer not null default 0,
      lease_epoch bigint not null default 0, lease_owner text, lease_holder jsonb,
      lease_expires_at timestamptz)`)
    await admin.query(`create table "${schema}".records (
      session_id text not null references "${schema}".sessions (id) on delete cascade,
      seq integer not null, record text not null, primary key (session_id, seq))`)
    await admin.query(
      `insert into "${schema}".sessions (id, created_at, updated_at) values ('old1', 1, 1), ('old2', 1, 1)`,
    )
    const store = open()
    await store.append('old1', [record('a')])
    await store.append('old2', [record('b')])
    await store.create({ id: 'new' })
    await store.append('new', [record('c')])
    const incarnations = await Promise.all(
      ['old1', 'old2', 'new'].map(async (id) => {
        for await (const followed of store.follow(id)) return followed.incarnation
      }),
    )
    expect(new Set(incarnations).size).toBe(3)
    expect((await store.read('old1')).map((event) => event.id)).toEqual(['a'])
    // Opening the store again changes nothing.
    await open().list()
    const { rows } = await admin.query(`select id, incarnation from "${schema}".sessions order by id`)
    expect(rows.map((row) => row.incarnation)).toEqual([incarnations[2], incarnations[0], incarnations[1]])
  })

  test('tables made before list took a parent get its index on first use, and list by the rows they hold', async () => {
    const before = open()
    await before.create({ id: 'parent' })
    await before.create({ id: 'child', parentSessionId: 'parent', subAgent: { name: 'a' } })
    await admin.query(`drop index "${schema}".sessions_of_parent_in_list_order`)
    await before.close()
    const store = open()
    expect((await store.list({ parentSessionId: 'parent' })).map((info) => info.id)).toEqual(['child'])
    const { rows } = await admin.query(
      'select indexname from pg_indexes where schemaname = $1 and indexname = $2',
      [schema, 'sessions_of_parent_in_list_order'],
    )
    expect(rows).toHaveLength(1)
    // Opening the store again changes nothing.
    await open().list()
  })

  test('hosts starting together on an empty database all create their first session', async () => {
    const hosts = [open(), open(), open(), open()]
    await Promise.all(hosts.map((host, i) => host.create({ id: `s${i}` })))
    expect((await hosts[0]!.list()).map((info) => info.id).sort()).toEqual(['s0', 's1', 's2', 's3'])
  })

  test('a role that may only read and write the tables a migration made uses the store', async () => {
    for (const statement of schemaStatements(schema)) await admin.query(statement)
    const role = `app_${schema}`
    await admin.query(`create role ${role} login password 'app'`)
    try {
      await admin.query(`grant usage on schema "${schema}" to ${role}`)
      await admin.query(`grant select, insert, update, delete on all tables in schema "${schema}" to ${role}`)
      const url = new URL(postgresUrl())
      url.username = role
      url.password = 'app'
      const store = open({ connectionString: url.href })
      await store.create({ id: 's' })
      await store.append('s', [record('a')])
      expect((await store.read('s')).map((event) => event.id)).toEqual(['a'])
      await store.close()
    } finally {
      await admin.query(`drop owned by ${role}`)
      await admin.query(`drop role ${role}`)
    }
  })

  test("a store starting on tables already made waits for no other host's write", async () => {
    const first = open()
    await first.create({ id: 's' })
    const writer = await admin.connect()
    try {
      await writer.query('begin')
      await writer.query(`update "${schema}".sessions set updated_at = updated_at where id = 's'`)
      // Waiting for that write would time out instead of answering.
      const url = new URL(postgresUrl())
      url.searchParams.set('options', '-c lock_timeout=2000')
      expect(await open({ connectionString: url.href }).info('s')).toMatchObject({ id: 's' })
    } finally {
      await writer.query('rollback')
      writer.release()
    }
  })

  test("an idle connection of the store's own pool ended by the server neither crashes the host nor the next append", async () => {
    const application = `victim_${schema}`
    const store = createPostgresSessionStore({
      connectionString: `${postgresUrl()}${postgresUrl().includes('?') ? '&' : '?'}application_name=${application}`,
      schema,
    })
    stores.push(store)
    await store.create({ id: 's' })
    const killed = await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
      [application],
    )
    expect(killed.rowCount).toBeGreaterThan(0)
    // Let the ended connection's error reach the pool before the store is used again. The backend
    // sends the error before it leaves pg_stat_activity, so once the view shows it gone the error is
    // on the socket, and the I/O phase that read the view's reply reads it too, before setImmediate.
    const victims = async () =>
      (await admin.query('select 1 from pg_stat_activity where application_name = $1', [application]))
        .rowCount
    while ((await victims()) !== 0) await new Promise((resolve) => setTimeout(resolve, 10))
    await new Promise((resolve) => setImmediate(resolve))
    await store.append('s', [record('after')])
    expect((await store.read('s')).map((event) => event.id)).toEqual(['after'])
  })

  test('a pool the host passes in is used and never ended by the store', async () => {
    const pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 })
    const store = createPostgresSessionStore({ pool, schema })
    await store.create({ id: 's' })
    await store.close()
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }])
    await pool.end()
  })

  test("a host's pool of one connection serves appends and reads while a session is followed", async () => {
    const pool = new pg.Pool({ connectionString: postgresUrl(), max: 1 })
    const store = createPostgresSessionStore({ pool, schema })
    stores.push(store)
    await store.create({ id: 's' })
    const abort = new AbortController()
    const seen: string[] = []
    const following = (async () => {
      for await (const { record } of store.follow('s', { signal: abort.signal })) seen.push(record.id)
    })()
    /** The promise's value, or a failure naming `what` once it has waited 5 s (a deadlock). */
    const within = <T>(what: string, promise: Promise<T>) =>
      Promise.race([
        promise,
        new Promise<never>((_, reject) => {
          setTimeout(() => reject(new Error(`${what} still waits for a connection`)), 5_000).unref()
        }),
      ])
    // Let the follower reach its wait (it listens by then), then use the store around it.
    while (pool.totalCount === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    await new Promise((resolve) => setTimeout(resolve, 200))
    await within('append', store.append('s', [record('a')]))
    expect((await within('read', store.read('s'))).map((event) => event.id)).toEqual(['a'])
    while (seen.length < 1) await within('the follower', new Promise((resolve) => setTimeout(resolve, 10)))
    expect(seen).toEqual(['a'])
    abort.abort()
    await following
    await store.close()
    await pool.end()
  })

  test('followers share one LISTEN connection beside the pool, closed when the last one ends', async () => {
    const pool = new pg.Pool({ connectionString: postgresUrl(), max: 3 })
    const store = createPostgresSessionStore({ pool, schema })
    stores.push(store)
    await store.create({ id: 'a' })
    await store.create({ id: 'b' })
    const listening = async () =>
      (await admin.query('select pid from pg_stat_activity where query = $1', [`listen "${schema}_records"`]))
        .rowCount
    const abort = new AbortController()
    const seen: string[] = []
    const follow = async (id: string) => {
      for await (const { record } of store.follow(id, { signal: abort.signal }))
        seen.push(`${id}:${record.id}`)
    }
    const following = [follow('a'), follow('b')]
    await store.append('a', [record('1')])
    await store.append('b', [record('2')])
    while (seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(seen.sort()).toEqual(['a:1', 'b:2'])
    expect(await listening()).toBe(1)
    abort.abort()
    await Promise.all(following)
    while ((await listening()) !== 0) await new Promise((resolve) => setTimeout(resolve, 10))
    // The pool is whole again: its connections all serve queries.
    await Promise.all([1, 2, 3].map(() => pool.query('select pg_sleep(0.01)')))
    await store.close()
    await pool.end()
  })
})
