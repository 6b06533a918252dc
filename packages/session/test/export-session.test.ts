import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { HistoryEvent } from '@kode/protocol'
import {
  createMemorySessionStore,
  exportHtml,
  exportSessionHtml,
  loadSubSessions,
  SessionError,
  type SessionStore,
} from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { describe, expect, test } from 'vitest'
import { generateSession } from '../../../test/history/generate-session.js'
import { HistoryBuilder } from '../../../test/history/history.js'
import { manyChildren } from './helpers/many-children.js'
import { scrambledHistory } from './helpers/scramble-history.js'

// exportSessionHtml reads a store in batches and must give, byte for byte, the page exportHtml
// gives for the whole history with the session's info and its sub-agent sessions.

async function fill(store: SessionStore, history: HistoryEvent[], subSessions: Map<string, HistoryEvent[]>) {
  await store.create({ id: 'main', title: 'exported' })
  await store.append('main', history)
  for (const [id, records] of subSessions) {
    await store.create({ id, parentSessionId: 'main' })
    await store.append(id, records)
  }
}

async function wholePage(store: SessionStore, options: { title?: string } = {}) {
  const history = await store.read('main')
  const [info, subSessions] = await Promise.all([store.info('main'), loadSubSessions(store, history)])
  return exportHtml(history, { ...options, ...(info ? { info } : {}), subSessions })
}

describe('exportSessionHtml', () => {
  test('the imageUrls option is honoured when the store is read in batches', async () => {
    const store = createMemorySessionStore({ now: () => 1_700_000_000_000 })
    const url = 'https://bucket.test/a.png?sig=abc123'
    await fill(store, [new HistoryBuilder().user('look', [{ type: 'image_url', url }])], new Map())
    expect(await exportSessionHtml(store, 'main', { batchSize: 1 })).not.toContain('abc123')
    expect(await exportSessionHtml(store, 'main', { batchSize: 1, imageUrls: 'as-given' })).toContain(
      'abc123',
    )
  })

  test('scrambled histories with sub-agent sessions export byte for byte as exportHtml, at any batch size', async () => {
    for (let seed = 1; seed <= 80; seed++) {
      const { history, subSessions } = scrambledHistory(seed, 1 + (seed % 37))
      const store = createMemorySessionStore({ now: () => 1_700_000_000_000 })
      await fill(store, history, subSessions)
      const whole = await wholePage(store)
      for (const batchSize of [1, 3, 1000]) {
        expect(
          await exportSessionHtml(store, 'main', { batchSize }),
          `seed ${seed}, batches of ${batchSize}`,
        ).toBe(whole)
      }
    }
  }, 60_000) // 320 pages rendered through a store: half a second alone, seconds on a loaded machine

  test('a realistic session in a file store exports byte for byte as exportHtml, title and images too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kode-export-'))
    const store = createFileSessionStore({ dir, fsync: false })
    try {
      const { history, subSessions } = generateSession({ seed: 11, tasks: 25, sessionId: 'main' })
      await fill(store, history, subSessions)
      const resolveImage = () => 'data:image/png;base64,AAAA'
      const history2 = await store.read('main')
      const [info, subs] = await Promise.all([store.info('main'), loadSubSessions(store, history2)])
      const whole = exportHtml(history2, { info: info!, subSessions: subs, resolveImage, title: 'T' })
      expect(whole).toContain('sub-agent')
      expect(await exportSessionHtml(store, 'main', { batchSize: 7, resolveImage, title: 'T' })).toBe(whole)
    } finally {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a store without readBatches is read whole, with the same page', async () => {
    const store = createMemorySessionStore({ now: () => 1_700_000_000_000 })
    const { history, subSessions } = generateSession({ seed: 2, tasks: 8, sessionId: 'main' })
    await fill(store, history, subSessions)
    const { readBatches: _, ...rest } = store
    const plain: SessionStore = rest
    expect(await exportSessionHtml(plain, 'main')).toBe(await wholePage(store))
  })

  test('a missing session fails with session_not_found; an aborted export throws the signal reason', async () => {
    const store = createMemorySessionStore()
    const error = await exportSessionHtml(store, 'nope').catch((e: unknown) => e)
    expect(SessionError.is(error) && error.code).toBe('session_not_found')
    await store.create({ id: 'main' })
    const reason = new Error('stop')
    expect(
      await exportSessionHtml(store, 'main', { signal: AbortSignal.abort(reason) }).catch((e) => e),
    ).toBe(reason)
  })
})

test('an abort while the sub-agent sessions of a batch are read stops reading them', async () => {
  for (const batched of [true, false]) {
    const { store, reads, controller } = await manyChildren(40)
    const plain: SessionStore = batched ? store : { ...store, readBatches: undefined }
    const error = await exportSessionHtml(plain, 'main', { signal: controller.signal }).catch(
      (e: unknown) => e,
    )
    expect(error).toBe(controller.signal.reason)
    expect(reads.length).toBeLessThan(40)
  }
})

describe('exportSessionHtml of a session deleted while it is read', () => {
  const user = (id: string): HistoryEvent => ({
    role: 'user',
    id,
    createdAt: 1,
    parts: [{ type: 'text', text: id }],
  })

  /** A memory store whose clock ticks, and whose reads of `main` run `meanwhile` once, after they began. */
  async function racedStore(meanwhile: (store: SessionStore) => Promise<void>, batched: boolean) {
    let t = 1_700_000_000_000
    const store = createMemorySessionStore({ now: () => (t += 1000) })
    await store.create({ id: 'main', title: 'the old one' })
    await store.append('main', [user('old0'), user('old1'), user('old2')])
    let ran = false
    const once = async () => {
      if (ran) return
      ran = true
      await meanwhile(store)
    }
    const raced: SessionStore = {
      ...store,
      info: (id) => store.info(id),
      read: async (id) => {
        const history = await store.read(id)
        await once()
        return history
      },
    }
    if (batched)
      raced.readBatches = async function* (id, options) {
        for await (const batch of store.readBatches!(id, options)) {
          yield batch
          await once()
        }
      }
    else delete raced.readBatches
    return raced
  }

  const recreate = async (store: SessionStore) => {
    await store.delete('main')
    await store.create({ id: 'main', title: 'the new one' })
    await store.append('main', [user('new0')])
  }

  test.each([
    ['created again, read in batches', recreate, true],
    ['created again, read whole', recreate, false],
    ['deleted, read in batches', (store: SessionStore) => store.delete('main'), true],
  ] as const)(
    '%s: fails with session_not_found rather than mix two sessions',
    async (_, meanwhile, batched) => {
      const store = await racedStore(meanwhile, batched)
      const error = await exportSessionHtml(store, 'main', { batchSize: 1 }).catch((e: unknown) => e)
      expect(SessionError.is(error) && error.code).toBe('session_not_found')
      expect((error as Error).message).toBe(
        'session main was deleted (or deleted and created again under its id) while it was exported; export it again',
      )
    },
  )

  test.each([
    ['read in batches', true],
    ['read whole', false],
  ] as const)(
    'records appended before the read began: "Updated" is when the last of them was (%s)',
    async (_, batched) => {
      const store = await racedStore(async () => {}, batched)
      const startInfo = (await store.info('main'))!
      let first = true
      // Another writer appends right after the export read the session's metadata.
      const raced: SessionStore = {
        ...store,
        info: async (id) => {
          const info = await store.info(id)
          if (first) {
            first = false
            await store.append('main', [user('later')])
          }
          return info
        },
      }
      const page = await exportSessionHtml(raced, 'main', { batchSize: 1 })
      const info = (await store.info('main'))!
      expect(info.updatedAt).toBeGreaterThan(startInfo.updatedAt)
      expect(page).toBe(exportHtml(await store.read('main'), { info, subSessions: new Map() }))
    },
  )

  test('records appended once the read began: "Updated" is that of the records read', async () => {
    const store = await racedStore((s) => s.append('main', [user('later')]), true)
    const info = (await store.info('main'))!
    const page = await exportSessionHtml(store, 'main', { batchSize: 1 })
    expect((await store.info('main'))!.updatedAt).toBeGreaterThan(info.updatedAt)
    const read = [user('old0'), user('old1'), user('old2')]
    expect(page).toBe(exportHtml(read, { info, subSessions: new Map() }))
  })

  test('a session appended to while it is read exports as it was read', async () => {
    const store = await racedStore((s) => s.append('main', [user('later')]), true)
    const page = await exportSessionHtml(store, 'main', { batchSize: 1 })
    expect(page).toContain('the old one')
    expect(page).toContain('old2')
  })
})
