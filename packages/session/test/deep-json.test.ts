import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { HistoryEvent } from '@kode/protocol'
import { forkSession, SessionError, type SessionStore } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'

// A history line nested far deeper than `JSON.stringify` can go (a hand-edited or hostile file)
// can be read but never written again. Records nest at most 512 levels deep when they are written:
// a fork of such a session fails on that record and removes the copy it began.

let dir: string
let store: SessionStore

const record = (id: string, extra?: unknown): HistoryEvent =>
  ({
    role: 'user',
    id,
    createdAt: 1,
    parts: [{ type: 'text', text: id }],
    ...(extra === undefined ? {} : { extra }),
  }) as HistoryEvent

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kode-deep-json-'))
  store = createFileSessionStore({ dir, fsync: false })
  await store.create({ id: 's' })
  await store.append('s', [record('r1')])
})
afterEach(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('a history line nested deeper than a record may be', () => {
  const deepLine = (depth: number) =>
    `{"v":1,"role":"user","id":"r2","createdAt":1,"parts":[{"type":"text","text":"r2"}],"extra":${'['.repeat(depth)}1${']'.repeat(depth)}}\n`

  test('it is read; a fork of the session fails on it, typed, and leaves no copy behind', async () => {
    await store.close()
    appendFileSync(join(dir, 's', 'history.jsonl'), deepLine(200_000))
    store = createFileSessionStore({ dir, fsync: false })
    expect((await store.read('s')).map((event) => event.id)).toEqual(['r1', 'r2'])
    const error = await forkSession(store, 's').catch((e: unknown) => e)
    expect(SessionError.is(error) && error.code).toBe('invalid_record')
    expect((error as Error).message).toContain('nested at most 512 arrays and objects deep')
    expect((await store.list()).map((info) => info.id)).toEqual(['s'])
  })

  test('appending a record nested that deep is refused, and nothing is written', async () => {
    const before = readFileSync(join(dir, 's', 'history.jsonl'), 'utf8')
    let nested: unknown = 1
    for (let i = 0; i < 600; i++) nested = [nested]
    const error = await store.append('s', [record('r2'), record('r3', nested)]).catch((e: unknown) => e)
    expect(SessionError.is(error) && error.code).toBe('invalid_record')
    expect((error as Error).message).toContain('record 1 of 2')
    expect(readFileSync(join(dir, 's', 'history.jsonl'), 'utf8')).toBe(before)
  })
})
