import { CodecError, type HistoryEvent, roundTripHistoryEvent } from '@kode/protocol'
import {
  DEFAULT_READ_BATCH_SIZE,
  exportHtml,
  exportSessionHtml,
  forkSession,
  SessionError,
  SessionLockedError,
  type SessionPatch,
  type SessionStore,
  type StoreClock,
} from '@kode/session'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { HistoryBuilder, shortConversation } from '../history/history.js'
import { describeFollowContract } from './follow-contract.js'
import { describeReadBatchesContract } from './read-batches-contract.js'

// The behaviour every SessionStore shares. Each store's tests call `describeSessionStoreContract`
// with a harness, so a new store (a database, a remote service) proves the same contract.

/** How the contract suite opens one store implementation over fresh backing data. */
export interface StoreHarness {
  /** A store over the same backing data every time it is called (after the previous one closed). */
  open(clock?: StoreClock): SessionStore
  /** Removes the backing data; called after the store closed. */
  cleanup(): void | Promise<void>
  /**
   * Damages the stored metadata of session `sessionId` as a disk or a hand edit could, so the store
   * can no longer read it. Stores whose metadata cannot be damaged so leave it out.
   */
  corruptMetadata?(sessionId: string): void | Promise<void>
}

/** A clock that ticks one second per call, and ids `s1`, `s2`, ... */
export function fakeClock(): Required<StoreClock> {
  let t = 1_000_000
  let n = 0
  return { now: () => (t += 1000), createId: () => `s${++n}` }
}

/** The `SessionError` code a promise rejects with, or `undefined` when it resolves. */
export async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise
    return undefined
  } catch (error) {
    return SessionError.is(error) ? error.code : `not a SessionError: ${String(error)}`
  }
}

const record = (id: string): HistoryEvent => ({ role: 'user', id, createdAt: 1, parts: [] })

/**
 * Registers the shared SessionStore tests for one implementation. `follows`: whether the store
 * implements `follow` (a store that does not must leave it undefined). `readBatchSize`: its
 * `readBatches` default (1,000, `DEFAULT_READ_BATCH_SIZE`, unless the store has its own).
 * `corruptible`: the harness implements `corruptMetadata`.
 */
export function describeSessionStoreContract(
  name: string,
  makeHarness: () => StoreHarness,
  {
    follows,
    readBatchSize = DEFAULT_READ_BATCH_SIZE,
    corruptible = false,
  }: { follows: boolean; readBatchSize?: number; corruptible?: boolean },
): void {
  describe(`${name} store: the SessionStore contract`, () => {
    let harness: StoreHarness
    let store: SessionStore
    beforeEach(() => {
      harness = makeHarness()
      store = harness.open(fakeClock())
    })
    afterEach(async () => {
      await store.close()
      await harness.cleanup()
    })

    test('create generates an id and stamps both times with the clock', async () => {
      const info = await store.create({ title: 'first' })
      expect(info).toEqual({
        id: 's1',
        title: 'first',
        createdAt: 1_001_000,
        updatedAt: 1_001_000,
        recordCount: 0,
      })
    })

    test('create keeps a given id and the sub-agent link', async () => {
      const info = await store.create({
        id: 'child-1',
        parentSessionId: 'parent',
        subAgent: { name: 'explore', parentToolCallId: 'call-9' },
        model: 'm',
        provider: 'p',
      })
      expect(info).toMatchObject({
        id: 'child-1',
        parentSessionId: 'parent',
        subAgent: { name: 'explore', parentToolCallId: 'call-9' },
        model: 'm',
        provider: 'p',
      })
      expect(await store.info('child-1')).toEqual(info)
    })

    test('create refuses an id that is taken', async () => {
      await store.create({ id: 'a' })
      expect(await codeOf(store.create({ id: 'a' }))).toBe('session_exists')
    })

    test('read returns what was appended, in order, across appends', async () => {
      const { id } = await store.create()
      const history = shortConversation()
      await store.append(id, history.slice(0, 1))
      await store.append(id, history.slice(1))
      expect(await store.read(id)).toEqual(history)
    })

    test('records hold any text and any JSON number, read back as encoded, by every way of reading', async () => {
      // What a database may refuse or rewrite: NUL, lone surrogates, escapes, line separators, a
      // would-be SQL string; numbers at the edges of a double, and -0 (JSON writes it as 0).
      const texts = [
        'nul \u0000',
        'cut \ud83d',
        '\ude00 low',
        '\u2028\u2029\r\n',
        '\\u0000 "q"',
        "'; drop table x; --",
      ]
      const times = [1e308, -0, 5e-324, Number.MAX_SAFE_INTEGER + 2]
      const records = [
        ...texts.map(
          (text, i): HistoryEvent => ({
            role: 'user',
            id: `t${i}`,
            createdAt: 1,
            parts: [{ type: 'text', text }],
          }),
        ),
        ...times.map((createdAt, i): HistoryEvent => ({ ...record(`n${i}`), createdAt })),
      ]
      const { id } = await store.create()
      await store.append(id, records)
      const held = records.map(roundTripHistoryEvent)
      expect(Object.is((held[texts.length + 1] as { createdAt: number }).createdAt, 0)).toBe(true)
      expect(await store.read(id)).toEqual(held)
      const batches: HistoryEvent[] = []
      for await (const batch of store.readBatches!(id, { batchSize: 3 })) batches.push(...batch)
      expect(batches).toEqual(held)
      if (store.follow) {
        const followed: HistoryEvent[] = []
        for await (const item of store.follow(id)) {
          followed.push(item.record)
          if (followed.length === held.length) break
        }
        expect(followed).toEqual(held)
      }
    })

    test('append counts records and moves updatedAt', async () => {
      const { id, createdAt } = await store.create()
      await store.append(id, shortConversation())
      expect(await store.info(id)).toMatchObject({ recordCount: 4, createdAt, updatedAt: createdAt + 1000 })
    })

    test('appends issued without waiting land in call order', async () => {
      const { id } = await store.create()
      const h = new HistoryBuilder()
      const records = Array.from({ length: 40 }, (_, i) => h.user(`message ${i}`))
      await Promise.all(records.map((record) => store.append(id, [record])))
      expect((await store.read(id)).map((e) => e.id)).toEqual(records.map((r) => r.id))
    })

    test('an invalid record fails the whole append and nothing of it is written', async () => {
      const { id } = await store.create()
      const h = new HistoryBuilder()
      const bad = { ...h.user('x'), parts: [{ type: 'text' }] } as unknown as HistoryEvent
      const error = await store.append(id, [h.user('kept out'), bad]).catch((e: unknown) => e)
      expect(SessionError.is(error) && error.code).toBe('invalid_record')
      expect((error as Error).message).toContain('record 1 of 2')
      expect(CodecError.is((error as Error).cause)).toBe(true)
      expect(await store.read(id)).toEqual([])
      expect((await store.info(id))?.recordCount).toBe(0)
    })

    test('append and read of a missing session fail with session_not_found', async () => {
      expect(await codeOf(store.append('nope', shortConversation()))).toBe('session_not_found')
      expect(await codeOf(store.append('nope', []))).toBe('session_not_found')
      expect(await codeOf(store.read('nope'))).toBe('session_not_found')
      expect(await codeOf(store.update('nope', { title: 't' }))).toBe('session_not_found')
    })

    test('info of a missing session is undefined', async () => {
      expect(await store.info('nope')).toBeUndefined()
    })

    test('update changes title, model and provider but not updatedAt', async () => {
      const created = await store.create({ title: 'old', model: 'a' })
      const updated = await store.update(created.id, { title: 'new', provider: 'p' })
      expect(updated).toEqual({ ...created, title: 'new', model: 'a', provider: 'p' })
      expect(await store.info(created.id)).toEqual(updated)
    })

    test('updates and appends to one session apply in call order, also when not awaited one by one', async () => {
      await store.create({ id: 's' })
      const calls: Promise<unknown>[] = []
      for (let i = 0; i < 100; i++) {
        calls.push(store.update('s', { title: `t${i}` }))
        calls.push(store.append('s', [record(`r${i}`)]))
      }
      const results = await Promise.all(calls)
      // Each update returns the session as it left it: its own title, after the appends before it.
      const updates = results.filter((_, i) => i % 2 === 0) as { title: string; recordCount: number }[]
      expect(updates.map((info) => [info.title, info.recordCount])).toEqual(
        Array.from({ length: 100 }, (_, i) => [`t${i}`, i]),
      )
      expect(await store.info('s')).toMatchObject({ title: 't99', recordCount: 100 })
    })

    test('update changes nothing but title, model and provider, whatever else a patch holds', async () => {
      const created = await store.create({ parentSessionId: 'parent', subAgent: { name: 'sub' } })
      // A caller outside TypeScript may send a patch with any fields (a request body, say).
      const patch = {
        title: 'new',
        id: 'other',
        parentSessionId: 'elsewhere',
        subAgent: { name: 'changed' },
        forkedFrom: { sessionId: 'x', messageId: 'y' },
        recordCount: 7,
      } as SessionPatch
      const updated = await store.update(created.id, patch)
      expect(updated).toEqual({ ...created, title: 'new' })
      expect(await store.info(created.id)).toEqual(updated)
    })

    test('create and update refuse metadata of the wrong shape with invalid_metadata, changing nothing', async () => {
      const created = await store.create({ id: 's', title: 't' })
      // From a caller outside TypeScript: stored, it would make the session's metadata unreadable.
      for (const patch of [{ title: 42 }, { model: { name: 'm' } }, { provider: null }, null]) {
        expect(await codeOf(store.update('s', patch as unknown as SessionPatch))).toBe('invalid_metadata')
      }
      expect(await store.info('s')).toEqual(created)
      for (const init of [{ title: 42 }, { subAgent: { parentToolCallId: 'c' } }, { forkedFrom: 's' }]) {
        expect(await codeOf(store.create({ id: 'n', ...init } as never))).toBe('invalid_metadata')
      }
      expect(await store.info('n')).toBeUndefined()
      expect((await store.list()).map((s) => s.id)).toEqual(['s'])
    })

    test('fields a link carries beyond its own are kept exactly, whatever their keys and text', async () => {
      // A caller outside TypeScript may pass a link with fields of its own: any key, any text, any
      // value a database might take for its own encoding.
      const extra = {
        'nul \u0000 key': 'nul \u0000 value',
        '\ud83d': ['\ude00', { 'kode:json': 'not json' }],
        nested: { 'kode:json': '"looks wrapped"' },
        n: 1.5,
      }
      const subAgent = { name: 'sub', ...extra } as never
      const forkedFrom = { sessionId: 'src', messageId: 'm', ...extra } as never
      const created = await store.create({ id: 's', subAgent, forkedFrom })
      expect(created).toMatchObject({ subAgent, forkedFrom })
      expect(await store.info('s')).toEqual(created)
      expect(await store.list()).toEqual([created])
    })

    test('list returns every session, newest updated first', async () => {
      const a = await store.create()
      const b = await store.create()
      const c = await store.create({ parentSessionId: 'x', subAgent: { name: 'sub' } })
      await store.append(a.id, shortConversation())
      expect((await store.list()).map((s) => s.id)).toEqual([a.id, c.id, b.id])
    })

    test('list orders ids that tie on both times as JavaScript compares strings, also past a cursor', async () => {
      await store.close()
      store = harness.open({ now: () => 1000 })
      for (const id of ['a', 'B', '_x', 'a-b', 'a_b', 'a.b', '9', 'A', 'aB', 'ab'])
        await store.create({ id, parentSessionId: 'p' })
      const order = ['9', 'A', 'B', '_x', 'a', 'a-b', 'a.b', 'aB', 'a_b', 'ab']
      expect((await store.list()).map((s) => s.id)).toEqual(order)
      expect((await store.list({ parentSessionId: 'p' })).map((s) => s.id)).toEqual(order)
      const cursor = (id: string) => ({ updatedAt: 1000, createdAt: 1000, id })
      expect((await store.list({ after: cursor('Ab'), limit: 3 })).map((s) => s.id)).toEqual(['B', '_x', 'a'])
      expect((await store.list({ after: cursor('aé') })).map((s) => s.id)).toEqual([])
      expect((await store.list({ after: cursor('a\u0000') })).map((s) => s.id)).toEqual(order.slice(5))
    })

    test('list with parentSessionId returns the sub-agent sessions and forks of that session only', async () => {
      const parent = await store.create({ id: 'parent' })
      const sub = await store.create({ id: 'sub', parentSessionId: 'parent', subAgent: { name: 'a' } })
      const fork = await store.create({
        id: 'fork',
        parentSessionId: 'parent',
        forkedFrom: { sessionId: 'parent', messageId: 'm' },
      })
      await store.create({ id: 'other', parentSessionId: 'elsewhere', subAgent: { name: 'a' } })
      await store.create({ id: 'nested', parentSessionId: 'sub', subAgent: { name: 'b' } })
      await store.append(sub.id, shortConversation())
      const subNow = await store.info(sub.id)
      expect(await store.list({ parentSessionId: 'parent' })).toEqual([subNow, fork])
      expect((await store.list({ parentSessionId: 'sub' })).map((s) => s.id)).toEqual(['nested'])
      expect(await store.list({ parentSessionId: parent.id, limit: 1 })).toEqual([subNow])
      expect(await store.list({ parentSessionId: 'nobody' })).toEqual([])
      expect((await store.list({})).map((s) => s.id)).toEqual(['sub', 'nested', 'other', 'fork', 'parent'])
    })

    test('list with parentSessionId finds a parent id of any text', async () => {
      // The parent id is metadata, not checked as a session id: a database may store it encoded.
      for (const [i, parentSessionId] of ['nul \u0000 id', '\ud83d', 'it\'s "quoted"'].entries()) {
        await store.create({ id: `child${i}`, parentSessionId })
        expect((await store.list({ parentSessionId })).map((s) => s.id)).toEqual([`child${i}`])
      }
    })

    describe('paging', () => {
      // Seven sessions whose order needs every part of the key: f and g tie on updatedAt (f was
      // created later), c, d and e tie on both times (by id), a and b too.
      const order = ['f', 'g', 'c', 'd', 'e', 'a', 'b']
      beforeEach(async () => {
        let t = 1000
        await store.close()
        store = harness.open({ now: () => t, createId: () => 'unused' })
        for (const id of ['g', 'b', 'a'])
          await store.create({ id, parentSessionId: id === 'b' ? 'p' : undefined })
        t = 2000
        for (const id of ['e', 'c', 'd'])
          await store.create({ id, parentSessionId: id === 'e' ? undefined : 'p' })
        t = 3000
        await store.create({ id: 'f', parentSessionId: 'p' })
        await store.append('g', shortConversation())
      })

      test('orders ties on updatedAt by createdAt, then by id', async () => {
        const infos = await store.list()
        expect(infos.map((s) => s.id)).toEqual(order)
        expect(infos.map((s) => [s.updatedAt, s.createdAt])).toEqual([
          [3000, 3000],
          [3000, 1000],
          [2000, 2000],
          [2000, 2000],
          [2000, 2000],
          [1000, 1000],
          [1000, 1000],
        ])
      })

      test('walking the pages returns every session exactly once, in order', async () => {
        const pages: string[][] = []
        let page = await store.list({ limit: 3 })
        // Bounded, so a store that ignores the options fails here instead of looping.
        for (let reads = 1; reads <= order.length; reads++) {
          pages.push(page.map((s) => s.id))
          if (page.length < 3) break
          page = await store.list({ limit: 3, after: page.at(-1)! })
        }
        expect(pages).toEqual([['f', 'g', 'c'], ['d', 'e', 'a'], ['b']])
        // A page ending exactly at the end is followed by an empty one.
        const [last] = await store.list({ limit: 1, after: (await store.info('a'))! })
        expect(await store.list({ limit: 1, after: last! })).toEqual([])
      })

      test('pages of one parent', async () => {
        const first = await store.list({ parentSessionId: 'p', limit: 2 })
        expect(first.map((s) => s.id)).toEqual(['f', 'c'])
        const rest = await store.list({ parentSessionId: 'p', after: first.at(-1)! })
        expect(rest.map((s) => s.id)).toEqual(['d', 'b'])
      })

      test('after reads only the sort key, which need not be a session', async () => {
        const ids = async (after: { updatedAt: number; createdAt: number; id: string }, limit?: number) =>
          (await store.list({ after: { title: 'ignored', recordCount: -1, ...after } as never, limit })).map(
            (s) => s.id,
          )
        expect(await ids({ updatedAt: 2000, createdAt: 2000, id: 'c' })).toEqual(['d', 'e', 'a', 'b'])
        expect(await ids({ updatedAt: 2000, createdAt: 2000, id: 'cc' }, 1)).toEqual(['d'])
        expect(await ids({ updatedAt: 3000, createdAt: 2999, id: '' })).toEqual([
          'g',
          'c',
          'd',
          'e',
          'a',
          'b',
        ])
        // Times no session has: a fraction, and values beyond any a database column holds.
        expect(await ids({ updatedAt: 2000.5, createdAt: 0, id: '' })).toEqual(['c', 'd', 'e', 'a', 'b'])
        expect(await ids({ updatedAt: 2000, createdAt: 1999.5, id: '' })).toEqual(['a', 'b'])
        expect(await ids({ updatedAt: Number.MAX_VALUE, createdAt: 0, id: '' })).toEqual(order)
        expect(await ids({ updatedAt: -Number.MAX_VALUE, createdAt: 0, id: '' })).toEqual([])
      })
    })

    test('list refuses options of the wrong shape with invalid_list_options, before it reads', async () => {
      await store.create()
      const key = { updatedAt: 1, createdAt: 1, id: 's1' }
      const bad: unknown[] = [
        null,
        'all',
        { limit: 0 },
        { limit: -1 },
        { limit: Number.NaN },
        { limit: 1.5 },
        { limit: Number.POSITIVE_INFINITY },
        { limit: '3' },
        { after: null },
        { after: 's1' },
        { after: { createdAt: 1, id: 's1' } },
        { after: { updatedAt: 1, id: 's1' } },
        { after: { updatedAt: 1, createdAt: 1 } },
        { after: { ...key, updatedAt: Number.NaN } },
        { after: { ...key, createdAt: Number.POSITIVE_INFINITY } },
        { after: { ...key, createdAt: '1' } },
        { after: { ...key, id: 1 } },
        { parentSessionId: 5 },
        { parentSessionId: null },
      ]
      for (const options of bad)
        expect(await codeOf(store.list(options as never))).toBe('invalid_list_options')
      // Checked before anything else: a closed store still names the options.
      await store.close()
      expect(await codeOf(store.list({ limit: 0 }))).toBe('invalid_list_options')
    })

    test('delete removes the session; deleting a missing one does nothing', async () => {
      const { id } = await store.create()
      await store.append(id, shortConversation())
      await store.delete(id)
      expect(await store.info(id)).toBeUndefined()
      expect(await store.list()).toEqual([])
      await expect(store.delete(id)).resolves.toBeUndefined()
      await expect(store.create({ id })).resolves.toMatchObject({ id, recordCount: 0 })
    })

    // Deleting is how a user gets rid of a session the store can no longer read.
    if (corruptible)
      test('a session whose metadata is corrupt can still be deleted', async () => {
        const { id } = await store.create()
        await store.append(id, shortConversation())
        const kept = await store.create()
        await store.close()
        await harness.corruptMetadata!(id)
        store = harness.open(fakeClock())
        await expect(store.info(id)).rejects.toThrow()
        await store.delete(id)
        expect(await store.info(id)).toBeUndefined()
        expect((await store.list()).map((s) => s.id)).toEqual([kept.id])
        await expect(store.create({ id })).resolves.toMatchObject({ id, recordCount: 0 })
      })

    if (corruptible)
      test('a page leaves out a session whose metadata is corrupt and is still full', async () => {
        for (const id of ['a', 'b', 'c', 'd']) await store.create({ id })
        await store.close()
        await harness.corruptMetadata!('c')
        store = harness.open(fakeClock())
        const first = await store.list({ limit: 2 })
        expect(first.map((s) => s.id)).toEqual(['d', 'b'])
        expect((await store.list({ limit: 2, after: first[1]! })).map((s) => s.id)).toEqual(['a'])
      })

    test('returned info is a copy the caller cannot change the store through', async () => {
      const info = await store.create({ subAgent: { name: 'a' } })
      info.subAgent!.name = 'changed'
      info.recordCount = 99
      expect(await store.info(info.id)).toMatchObject({ subAgent: { name: 'a' }, recordCount: 0 })
    })

    test.each([
      '../escape',
      '/etc/passwd',
      'a/b',
      'a\\b',
      '.',
      '..',
      '.hidden',
      '-rf',
      '',
      'C:evil',
      'x'.repeat(129),
      // Windows device names, with any extension and in any case: no directory can bear them there.
      'con',
      'NUL',
      'Aux.json',
      'prn.tar.gz',
      'com1',
      'COM9.log',
      'lpt1',
      'Lpt0.x',
      'con.',
      // Windows drops a name's trailing dots: `a.` would be the directory of session `a`.
      'a.',
      'run-1..',
    ])('session id %j is refused by every method', async (bad) => {
      for (const attempt of [
        store.create({ id: bad }),
        store.append(bad, []),
        store.read(bad),
        store.info(bad),
        store.update(bad, {}),
        store.delete(bad),
      ]) {
        expect(await codeOf(attempt)).toBe('invalid_session_id')
      }
    })

    test.each(['console', 'com10', 'null', 'lpt', 'aux-1', 'x.con', 'conx.json'])(
      'session id %j, only like a Windows device name, is a session',
      async (id) => {
        await store.create({ id })
        await store.append(id, [])
        expect((await store.info(id))?.id).toBe(id)
      },
    )

    test('close while a delete is under way waits for it, and resolves', async () => {
      await store.create({ id: 'gone' })
      await store.append('gone', shortConversation())
      const deleting = store.delete('gone')
      await store.close()
      await deleting
      const again = harness.open(fakeClock())
      expect(await again.info('gone')).toBeUndefined()
      await again.close()
    })

    test('a closed store refuses every operation', async () => {
      const { id } = await store.create()
      await store.close()
      for (const attempt of [
        store.create(),
        store.append(id, []),
        store.read(id),
        store.info(id),
        store.list(),
      ]) {
        expect(await codeOf(attempt)).toBe('store_closed')
      }
    })

    test('one lease at a time; other writers of the store are refused with a message that says what to do', async () => {
      await store.create({ id: 's' })
      const lease = await store.acquire('s')
      const error = await store.acquire('s').catch((e: unknown) => e)
      expect(error).toBeInstanceOf(SessionLockedError)
      expect((error as Error).message).toBe(
        'session s is being written by another writer of this store (an agent running a task on it, or a lease not released yet): wait for that task to end, or use another session id (forkSession copies one)',
      )
      expect(await codeOf(store.append('s', [record('plain')]))).toBe('session_locked')
      expect(await codeOf(store.delete('s'))).toBe('session_locked')
      expect(await codeOf(store.create({ id: 's' }))).toBe('session_exists')
      await lease.append([record('leased')])
      // Metadata is not history: it may change while a task runs.
      await store.update('s', { title: 'titled' })
      await lease.release()
      await lease.release()
      expect(await codeOf(lease.append([record('late')]))).toBe('store_closed')
      const next = await store.acquire('s')
      await next.append([record('next')])
      await next.release()
      await store.append('s', [record('plain')])
      expect((await store.read('s')).map((e) => e.id)).toEqual(['leased', 'next', 'plain'])
      expect(await store.info('s')).toMatchObject({ title: 'titled', recordCount: 3 })
    })

    test('of two concurrent acquire() calls exactly one wins', async () => {
      await store.create({ id: 's' })
      const results = await Promise.allSettled([store.acquire('s'), store.acquire('s')])
      const won = results.filter((r) => r.status === 'fulfilled')
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      expect(won).toHaveLength(1)
      expect(lost.map((r) => SessionError.is(r.reason) && r.reason.code)).toEqual(['session_locked'])
      await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<SessionStore['acquire']>>>).value.release()
    })

    test('of two concurrent create() calls for one id exactly one wins; the other changes nothing', async () => {
      const results = await Promise.allSettled([
        store.create({ id: 's', title: 'first' }),
        store.create({ id: 's', title: 'second' }),
      ])
      const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
      const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []))
      expect(won).toHaveLength(1)
      // The file store's loser may find the winner still writing the session (session_locked).
      expect(['session_exists', 'session_locked']).toContain(SessionError.is(lost[0]) && lost[0].code)
      expect(await store.info('s')).toEqual(won[0])
      expect(await codeOf(store.create({ id: 's' }))).toBe('session_exists')
    })

    test('acquire of a missing session is session_not_found and holds nothing', async () => {
      expect(await codeOf(store.acquire('nope'))).toBe('session_not_found')
      await store.create({ id: 'nope' })
      await (await store.acquire('nope')).release()
    })

    test('appends through a lease land in call order', async () => {
      const { id } = await store.create()
      const lease = await store.acquire(id)
      const h = new HistoryBuilder()
      const records = Array.from({ length: 20 }, (_, i) => h.user(`message ${i}`))
      await Promise.all(records.map((r) => lease.append([r])))
      await lease.release()
      expect((await store.read(id)).map((e) => e.id)).toEqual(records.map((r) => r.id))
      expect((await store.info(id))?.recordCount).toBe(20)
    })

    test('a fork holds the records up to the chosen one, links its source and exports like its history', async () => {
      await store.create({ id: 'src', title: 'Fix', model: 'm', provider: 'p' })
      const history = shortConversation()
      await store.append('src', history)
      const at = history[2]!.id
      const fork = await forkSession(store, 'src', at)
      expect(fork).toMatchObject({
        title: 'Fix (fork)',
        parentSessionId: 'src',
        forkedFrom: { sessionId: 'src', messageId: at },
        model: 'm',
        provider: 'p',
        recordCount: 3,
      })
      expect(fork.subAgent).toBeUndefined()
      expect(await store.read(fork.id)).toEqual(history.slice(0, 3))
      expect(await store.read('src')).toEqual(history)
      expect((await store.list({ parentSessionId: 'src' })).map((info) => info.id)).toEqual([fork.id])
      expect(await exportSessionHtml(store, fork.id)).toBe(
        exportHtml(history.slice(0, 3), { info: await store.info(fork.id) }),
      )
    })

    test("a fork of a sub-agent's approval pause owns a copy of the sub-agent; the source's is untouched", async () => {
      const b = new HistoryBuilder()
      const request = { toolCallId: 'w1', toolName: 'write_file', arguments: '{}' }
      const childPaused: HistoryEvent[] = [
        b.user('Write a.txt'),
        b.assistant([{ type: 'tool_call', id: 'w1', name: 'write_file', argumentsJson: '{}' }]),
        { type: 'approval_request', id: 'child-request', createdAt: 1, ...request },
        b.taskMetadata(1),
      ]
      const decided: HistoryEvent = {
        type: 'approval_decision',
        id: 'later',
        createdAt: 2,
        toolCallId: 'w1',
        toolName: 'write_file',
        approved: true,
      }
      await store.create({ id: 'parent' })
      await store.create({
        id: 'child',
        parentSessionId: 'parent',
        subAgent: { name: 'writer', parentToolCallId: 'p1' },
      })
      await store.append('child', [...childPaused, decided])
      const parent: HistoryEvent[] = [
        b.user('Please write a.txt'),
        b.assistant([{ type: 'tool_call', id: 'p1', name: 'writer', argumentsJson: '{}' }]),
        {
          type: 'approval_request',
          id: 'parent-request',
          createdAt: 3,
          ...request,
          sessionId: 'child',
          subAgentCall: { toolCallId: 'p1', sessionId: 'child' },
        },
        b.taskMetadata(1),
      ]
      await store.append('parent', parent)
      const fork = await forkSession(store, 'parent')
      const [copy] = await store.list({ parentSessionId: fork.id })
      expect(copy).toMatchObject({ subAgent: { name: 'writer', parentToolCallId: 'p1' } })
      expect(await store.read(copy!.id)).toEqual(childPaused)
      expect((await store.read(fork.id))[2]).toMatchObject({
        sessionId: copy!.id,
        subAgentCall: { toolCallId: 'p1', sessionId: copy!.id },
      })
      expect(await store.read('child')).toEqual([...childPaused, decided])
      expect(await store.read('parent')).toEqual(parent)
    })

    describeReadBatchesContract(() => store, readBatchSize)
    if (follows) describeFollowContract(() => store)
    else
      test('follow is left undefined by a store that does not follow', () => {
        expect(store.follow).toBeUndefined()
      })
  })
}
