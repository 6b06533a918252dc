import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CodecError, type HistoryEvent } from '@kode/protocol'
import { createMemorySessionStore, SessionError, type SessionStore, type StoreClock } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { HistoryBuilder, shortConversation } from './helpers/history.js'

// The behaviour every SessionStore shares, run against both implementations.

interface Harness {
  /** A store over the same backing data every time it is called (after the previous one closed). */
  open(clock?: StoreClock): SessionStore
  cleanup(): void
}

const harnesses: Record<string, () => Harness> = {
  memory() {
    return { open: (clock) => createMemorySessionStore(clock), cleanup() {} }
  },
  file() {
    const dir = mkdtempSync(join(tmpdir(), 'kode-store-'))
    return {
      open: (clock) => createFileSessionStore({ dir, fsync: false, ...clock }),
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
    }
  },
}

/** A clock that ticks one second per call, and ids `s1`, `s2`, ... */
function fakeClock(): Required<StoreClock> {
  let t = 1_000_000
  let n = 0
  return { now: () => (t += 1000), createId: () => `s${++n}` }
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise
    return undefined
  } catch (error) {
    return SessionError.is(error) ? error.code : `not a SessionError: ${String(error)}`
  }
}

describe.each(Object.keys(harnesses))('%s store', (kind) => {
  let harness: Harness
  let store: SessionStore
  beforeEach(() => {
    harness = harnesses[kind]!()
    store = harness.open(fakeClock())
  })
  afterEach(async () => {
    await store.close()
    harness.cleanup()
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

  test('list returns every session, newest updated first', async () => {
    const a = await store.create()
    const b = await store.create()
    const c = await store.create({ parentSessionId: 'x', subAgent: { name: 'sub' } })
    await store.append(a.id, shortConversation())
    expect((await store.list()).map((s) => s.id)).toEqual([a.id, c.id, b.id])
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
})
