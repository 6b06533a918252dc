import {
  copyFileSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { encodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import { SessionError, type SessionStore } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { afterEach, beforeEach, expect, test, vi } from 'vitest'

// A history file replaced under an open writer: `cp history.jsonl x && mv x history.jsonl`, or an
// editor that saves by writing a new file and renaming it over the old one. The writer's handle
// then names a file no path reaches, and what it appended there would be lost.

let dir: string
let outside: string
const stores: SessionStore[] = []

function openStore(): SessionStore {
  const store = createFileSessionStore({ dir, fsync: false })
  stores.push(store)
  return store
}
const record = (id: string): HistoryEvent => ({
  role: 'user',
  id,
  createdAt: 1,
  parts: [{ type: 'text', text: id }],
})
const history = () => join(dir, 's', 'history.jsonl')
const ids = (events: readonly HistoryEvent[]) => events.map((e) => e.id)

/** Replaces the history file by a copy renamed over it, as `cp` and `mv` (or an editor) do. */
function replaceByRename(): void {
  copyFileSync(history(), `${history()}.new`)
  renameSync(`${history()}.new`, history())
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  return 'resolved'
}

/** What a new store, opened now, reads of the session. */
async function readFresh(): Promise<string[]> {
  const store = openStore()
  const events = await store.read('s')
  await store.close()
  return ids(events)
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kode-history-replaced-'))
  outside = mkdtempSync(join(tmpdir(), 'kode-history-outside-'))
  const store = createFileSessionStore({ dir, fsync: false })
  await store.create({ id: 's' })
  await store.append('s', [record('r1'), record('r2')])
  await store.close()
})
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.allSettled(stores.splice(0).map((s) => s.close()))
  rmSync(dir, { recursive: true, force: true })
  rmSync(outside, { recursive: true, force: true })
})

test('an append after the history file was replaced by a rename is refused, and what was acknowledged is what a new store reads', async () => {
  const store = openStore()
  await store.append('s', [record('a1')])
  replaceByRename()

  const error = await rejection(store.append('s', [record('a2')]))
  expect(SessionError.is(error) && [error.code, error.sessionId]).toEqual(['history_replaced', 's'])
  expect((error as Error).message).toContain(history())
  // Nothing acknowledged is missing, and nothing refused is there.
  expect(await readFresh()).toEqual(['r1', 'r2', 'a1'])

  // The store let that writer go: its next append opens the file that is there now.
  await store.append('s', [record('a3')])
  expect(ids(await store.read('s'))).toEqual(['r1', 'r2', 'a1', 'a3'])
  expect((await store.info('s'))?.recordCount).toBe(4)
  await store.close()
  expect(await readFresh()).toEqual(['r1', 'r2', 'a1', 'a3'])
})

test('a history file an editor rewrote (fewer records) is read as it is now, not overwritten by the writer', async () => {
  const store = openStore()
  await store.append('s', [record('a1')])
  // The user drops the last record and saves through a temp file.
  const kept = readFileSync(history(), 'utf8').split('\n').slice(0, 2).join('\n')
  writeFileSync(`${history()}.tmp`, `${kept}\n`)
  renameSync(`${history()}.tmp`, history())

  expect(await rejection(store.append('s', [record('a2')]))).toMatchObject({ code: 'history_replaced' })
  expect(await rejection(store.update('s', { title: 't' }))).toBe('resolved')
  await store.close()
  const fresh = openStore()
  expect(ids(await fresh.read('s'))).toEqual(['r1', 'r2'])
  expect(await fresh.info('s')).toMatchObject({ recordCount: 2, title: 't' })
})

test('closing a writer whose history file was replaced leaves session.json to the file there now', async () => {
  const store = openStore()
  await store.append('s', [record('a1')])
  // Two records in place of `a1`, the first longer than it: where the old file ended, the new
  // one is in the middle of a line.
  const start = readFileSync(history(), 'utf8').split('\n').slice(0, 2).join('\n')
  const added = [record(`x1-${'y'.repeat(200)}`), record('x2')].map(encodeHistoryEvent).join('\n')
  writeFileSync(`${history()}.tmp`, `${start}\n${added}\n`)
  renameSync(`${history()}.tmp`, history())

  await store.close()
  const fresh = openStore()
  expect((await fresh.info('s'))?.recordCount).toBe(4)
  expect(ids(await fresh.read('s'))).toEqual(['r1', 'r2', `x1-${'y'.repeat(200)}`, 'x2'])
})

test("a lease's appends stay refused once its history file was replaced; a new lease writes to the file there now", async () => {
  const store = openStore()
  const lease = await store.acquire('s')
  await lease.append([record('a1')])
  replaceByRename()

  expect(await rejection(lease.append([record('a2')]))).toMatchObject({
    code: 'history_replaced',
    sessionId: 's',
  })
  // The records of the refused append are not in the history: a later one would follow a gap.
  expect(await rejection(lease.append([record('a3')]))).toMatchObject({ code: 'history_replaced' })
  await lease.release()

  const next = await store.acquire('s')
  await next.append([record('b1')])
  await next.release()
  await store.close()
  expect(await readFresh()).toEqual(['r1', 'r2', 'a1', 'b1'])
})

test('an append after the history file was deleted is refused, and writes nothing', async () => {
  const store = openStore()
  await store.append('s', [record('a1')])
  unlinkSync(history())

  expect(await rejection(store.append('s', [record('a2')]))).toMatchObject({ code: 'history_replaced' })
  await store.close()
  expect(await readFresh()).toEqual([])
})

test('an append after a symbolic link took the history file’s place is refused, and nothing is written through the link', async () => {
  const store = openStore()
  await store.append('s', [record('a1')])
  const target = join(outside, 'history.jsonl')
  copyFileSync(history(), target)
  const before = readFileSync(target, 'utf8')
  unlinkSync(history())
  symlinkSync(target, history())

  expect(await rejection(store.append('s', [record('a2')]))).toMatchObject({ code: 'history_replaced' })
  // A new writer refuses the link itself.
  expect(await rejection(store.append('s', [record('a3')]))).toMatchObject({ code: 'symlink_refused' })
  await store.close()
  expect(readFileSync(target, 'utf8')).toBe(before)
})

/**
 * Runs `during` once, right before the next history write reaches the file: after the writer's
 * checks before the append, as a replacement by another program can land.
 */
async function beforeNextWrite(during: () => void): Promise<void> {
  const probe = await open(join(outside, 'probe'), 'w')
  const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> }
  await probe.close()
  const original = proto.write
  let done = false
  vi.spyOn(proto, 'write').mockImplementation(async function (this: unknown, ...args: unknown[]) {
    if (!done) {
      done = true
      during()
    }
    return original.apply(this, args)
  })
}

test('an append whose write a replacement beat (after the check before it) is refused, not acknowledged and lost', async () => {
  const store = openStore()
  await store.append('s', [record('a1')])
  await beforeNextWrite(replaceByRename)

  // The copy was made before `a2` was written: the session's file does not hold it.
  const error = await rejection(store.append('s', [record('a2')]))
  vi.restoreAllMocks()
  expect(SessionError.is(error) && [error.code, error.sessionId]).toEqual(['history_replaced', 's'])
  expect((error as Error).message).toContain('written to the file this writer opened')
  expect(await readFresh()).toEqual(['r1', 'r2', 'a1'])

  // As after a replacement found before the write: the next call writes to the file there now.
  await store.append('s', [record('a3')])
  expect(ids(await store.read('s'))).toEqual(['r1', 'r2', 'a1', 'a3'])
  await store.close()
  expect(await readFresh()).toEqual(['r1', 'r2', 'a1', 'a3'])
})

test('a lease whose append a replacement beat stays refused, and later calls are told nothing was written', async () => {
  const store = openStore()
  const lease = await store.acquire('s')
  await lease.append([record('a1')])
  await beforeNextWrite(replaceByRename)

  expect(await rejection(lease.append([record('a2')]))).toMatchObject({ code: 'history_replaced' })
  vi.restoreAllMocks()
  const later = await rejection(lease.append([record('a3')]))
  expect(later).toMatchObject({ code: 'history_replaced' })
  expect((later as Error).message).toContain('nothing was written')
  await lease.release()
  await store.close()
  expect(await readFresh()).toEqual(['r1', 'r2', 'a1'])
})

test('an append is cut off and rejected when the writer cannot look after the write whether its file is still there', async () => {
  const store = openStore()
  await store.append('s', [record('a1')])
  const sessionDir = join(dir, 's')
  const aside = join(dir, 's-aside')
  // The session's directory moved aside, a link to itself in its place: the path cannot be looked
  // up (ELOOP), while the writer's open file is still the session's.
  await beforeNextWrite(() => {
    renameSync(sessionDir, aside)
    symlinkSync(sessionDir, sessionDir)
  })

  const error = await rejection(store.append('s', [record('a2')]))
  vi.restoreAllMocks()
  unlinkSync(sessionDir)
  renameSync(aside, sessionDir)
  expect(error).toMatchObject({ code: 'ELOOP' })
  expect(await readFresh()).toEqual(['r1', 'r2', 'a1'])
  // The writer carries on where the last acknowledged record ended.
  await store.append('s', [record('a3')])
  await store.close()
  expect(await readFresh()).toEqual(['r1', 'r2', 'a1', 'a3'])
})

test("this store's reads of a session it writes read the history file there now, and its next append is still refused", async () => {
  const store = openStore()
  await store.append('s', [record('a1')])
  // The file there now is longer than the one the writer holds, and where the writer's records end
  // it is in the middle of a line.
  const start = readFileSync(history(), 'utf8').split('\n').slice(0, 2).join('\n')
  const long = `x1-${'y'.repeat(200)}`
  const added = [record(long), record('x2')].map(encodeHistoryEvent).join('\n')
  writeFileSync(`${history()}.tmp`, `${start}\n${added}\n`)
  renameSync(`${history()}.tmp`, history())

  expect(ids(await store.read('s'))).toEqual(['r1', 'r2', long, 'x2'])
  const batches: string[] = []
  for await (const batch of store.readBatches!('s', { batchSize: 1 })) batches.push(...ids(batch))
  expect(batches).toEqual(['r1', 'r2', long, 'x2'])
  expect((await store.info('s'))?.recordCount).toBe(4)
  // Reading told the writer nothing: the append after the replacement is refused, as without them.
  expect(await rejection(store.append('s', [record('a2')]))).toMatchObject({ code: 'history_replaced' })
  await store.append('s', [record('a3')])
  expect(ids(await store.read('s'))).toEqual(['r1', 'r2', long, 'x2', 'a3'])
})
