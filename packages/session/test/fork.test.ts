import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMemorySessionStore, forkSession, SessionError, type SessionStore } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { beforeEach, describe, expect, test } from 'vitest'
import { HistoryBuilder, shortConversation } from '../../../test/history/history.js'

let store: SessionStore
beforeEach(() => {
  let n = 0
  store = createMemorySessionStore({ createId: () => `s${++n}` })
})

async function source(title?: string) {
  const info = await store.create({ id: 'src', model: 'm', provider: 'p', ...(title ? { title } : {}) })
  await store.append(info.id, shortConversation())
  return info
}

async function codeOf(promise: Promise<unknown>) {
  return promise.then(
    () => undefined,
    (error: unknown) => (SessionError.is(error) ? error.code : String(error)),
  )
}

describe('forkSession', () => {
  test('copies the history up to and including the chosen record', async () => {
    await source()
    const fork = await forkSession(store, 'src', 'm2')
    expect(await store.read(fork.id)).toEqual(shortConversation().slice(0, 2))
    expect(fork.recordCount).toBe(2)
  })

  test('copies the whole history when no record is chosen', async () => {
    await source()
    const fork = await forkSession(store, 'src')
    expect(await store.read(fork.id)).toEqual(shortConversation())
    expect(fork.forkedFrom).toEqual({ sessionId: 'src', messageId: 'm4' })
  })

  test('links the fork to its source and keeps model and provider', async () => {
    await source('Fix bug')
    const fork = await forkSession(store, 'src', 'm3')
    expect(fork).toMatchObject({
      parentSessionId: 'src',
      forkedFrom: { sessionId: 'src', messageId: 'm3' },
      model: 'm',
      provider: 'p',
    })
  })

  test('a fork of a sub-agent session is a top-level session', async () => {
    await store.create({ id: 'child', subAgent: { name: 'explore' }, parentSessionId: 'main' })
    await store.append('child', shortConversation())
    const fork = await forkSession(store, 'child')
    expect(fork.subAgent).toBeUndefined()
    expect(fork.parentSessionId).toBe('child')
  })

  test('the title is marked as a fork, and forking a fork does not stack the mark', async () => {
    await source('Fix bug')
    const first = await forkSession(store, 'src')
    expect(first.title).toBe('Fix bug (fork)')
    const second = await forkSession(store, first.id)
    expect(second.title).toBe('Fix bug (fork)')
  })

  test('an untitled source is named after its first prompt, cut to 60 characters', async () => {
    await store.create({ id: 'src' })
    const h = new HistoryBuilder()
    await store.append('src', [h.system('prompt'), h.user(`${'a'.repeat(80)}\nsecond line`)])
    expect((await forkSession(store, 'src')).title).toBe(`${'a'.repeat(59)}… (fork)`)
  })

  test('the id and title can be given', async () => {
    await source('Fix bug')
    expect(await forkSession(store, 'src', 'm1', { id: 'mine', title: 'Try B' })).toMatchObject({
      id: 'mine',
      title: 'Try B',
    })
  })

  test('the source is not changed', async () => {
    const before = await source('Fix bug')
    await forkSession(store, 'src', 'm2')
    expect(await store.read('src')).toEqual(shortConversation())
    expect(await store.info('src')).toEqual({ ...before, recordCount: 4, updatedAt: expect.any(Number) })
  })

  test('forking an empty session is refused and creates nothing', async () => {
    await store.create({ id: 'empty' })
    expect(await codeOf(forkSession(store, 'empty'))).toBe('empty_session')
    expect((await store.list()).map((s) => s.id)).toEqual(['empty'])
  })

  test('forking at a record that does not exist is refused and creates nothing', async () => {
    await source()
    expect(await codeOf(forkSession(store, 'src', 'nope'))).toBe('message_not_found')
    expect((await store.list()).map((s) => s.id)).toEqual(['src'])
  })

  test('forking a missing session fails with session_not_found', async () => {
    expect(await codeOf(forkSession(store, 'nope'))).toBe('session_not_found')
  })

  test('a fork in the file store is a session like any other', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kode-fork-'))
    try {
      const files = createFileSessionStore({ dir, fsync: false })
      await files.create({ id: 'src' })
      await files.append('src', shortConversation())
      const fork = await forkSession(files, 'src', 'm3', { id: 'f' })
      await files.close()
      const reopened = createFileSessionStore({ dir })
      expect(await reopened.read('f')).toEqual(shortConversation().slice(0, 3))
      expect(await reopened.info('f')).toEqual(fork)
      await reopened.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
