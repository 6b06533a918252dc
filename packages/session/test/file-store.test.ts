import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { open } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { encodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import {
  CorruptHistoryError,
  SessionError,
  SessionLockedError,
  type SessionStore,
  type StoreWarning,
} from '@kode/session'
import { createFileSessionStore, type FileSessionStoreOptions } from '@kode/session/file'
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { HistoryBuilder, shortConversation } from '../../../test/history/history.js'
import { META_REWRITE_BYTES } from '../src/store/file/session-writer.js'
import { ourStart } from './helpers/process-start.js'

/** User messages of sizes from about 0.5 kB to 50 kB, some of them not ASCII. */
function mixedRecords(count: number) {
  const h = new HistoryBuilder()
  return Array.from({ length: count }, (_, i) =>
    h.user(`${i} ${(i % 3 === 0 ? 'é—🙂 naïve ' : 'ascii text ').repeat(50 + ((i * 7919) % 4_000))}`),
  )
}

let dir: string
let warnings: StoreWarning[]
const stores: SessionStore[] = []

function openStore(options: Partial<FileSessionStoreOptions> = {}): SessionStore {
  const store = createFileSessionStore({ dir, fsync: false, onWarning: (w) => warnings.push(w), ...options })
  stores.push(store)
  return store
}
const historyFile = (id: string) => join(dir, id, 'history.jsonl')

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kode-file-store-'))
  warnings = []
})
afterEach(async () => {
  await Promise.allSettled(stores.splice(0).map((s) => s.close()))
  rmSync(dir, { recursive: true, force: true })
})

describe('layout', () => {
  test('a session is a directory holding its JSONL history and its metadata', async () => {
    const store = openStore()
    await store.create({ id: 'one', title: 'hello' })
    const history = shortConversation()
    await store.append('one', history)
    await store.close()
    expect(readdirSync(join(dir, 'one')).sort()).toEqual(['history.jsonl', 'session.json'])
    expect(readFileSync(historyFile('one'), 'utf8')).toBe(`${history.map(encodeHistoryEvent).join('\n')}\n`)
    expect(JSON.parse(readFileSync(join(dir, 'one', 'session.json'), 'utf8'))).toMatchObject({
      v: 1,
      id: 'one',
      title: 'hello',
      recordCount: 4,
    })
  })

  test('sessions, records and metadata survive closing and reopening the store', async () => {
    const first = openStore()
    const { id } = await first.create({ title: 'kept' })
    await first.append(id, shortConversation())
    const info = await first.info(id)
    await first.close()
    const second = openStore()
    expect(await second.info(id)).toEqual(info)
    expect(await second.read(id)).toEqual(shortConversation())
  })

  test('list ignores entries that are not sessions', async () => {
    const store = openStore()
    await store.create({ id: 'real' })
    writeFileSync(join(dir, 'stray.txt'), 'x')
    mkdirSync(join(dir, '.deleted-old'))
    mkdirSync(join(dir, 'no-metadata'))
    expect((await store.list()).map((s) => s.id)).toEqual(['real'])
  })
})

describe('sessions a crash left half deleted', () => {
  // delete() renames the session's directory to .deleted-<id>-<uuid>, then removes it: a crash in
  // between leaves that directory behind.
  const trash = (id: string) => `.deleted-${id}-${randomUUID()}`
  const leaveTrash = (name: string, files = 3) => {
    mkdirSync(join(dir, name))
    for (let i = 0; i < files; i++) writeFileSync(join(dir, name, `f${i}`), 'x'.repeat(1000))
  }

  test('list removes what a delete cut short left behind, and nothing else', async () => {
    const store = openStore()
    await store.create({ id: 'real' })
    const left = [trash('gone'), trash('real')]
    for (const name of left) leaveTrash(name)
    // Look-alikes: not named as delete names its directories, or not a directory.
    const outside = mkdtempSync(join(tmpdir(), 'kode-outside-'))
    writeFileSync(join(outside, 'keep'), 'x')
    const kept = [
      '.deleted-old',
      `.deleted-${randomUUID()}`,
      `.deleted-x-${randomUUID()}.bak`,
      '.deleted-x-1234',
    ]
    for (const name of kept) leaveTrash(name)
    const file = trash('file')
    writeFileSync(join(dir, file), 'x')
    const link = trash('link')
    symlinkSync(outside, join(dir, link), 'dir')
    try {
      expect((await store.list()).map((s) => s.id)).toEqual(['real'])
      expect(readdirSync(dir).sort()).toEqual([...kept, file, link, 'real'].sort())
      expect(readdirSync(outside)).toEqual(['keep'])
      expect(await store.read('real')).toEqual([])
    } finally {
      rmSync(outside, { recursive: true, force: true })
    }
  })

  test('stores listing together, and a delete under way meanwhile, neither fail nor lose a session', async () => {
    const listers = [openStore(), openStore(), openStore()]
    for (let i = 0; i < 10; i++) await listers[0]!.create({ id: `s${i}` })
    for (let i = 0; i < 20; i++) leaveTrash(trash(`t${i}`), 20)
    const lists = await Promise.all([
      ...listers.map((store) => store.list()),
      listers[0]!.delete('s0').then(() => listers[1]!.list()),
    ])
    for (const listed of lists.slice(0, 3)) expect(listed.length).toBeGreaterThanOrEqual(9)
    expect(lists[3]!.map((s) => s.id).sort()).toEqual(['s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9'])
    expect(readdirSync(dir).sort()).toEqual(['s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9'])
  })
})

describe('torn and corrupt history', () => {
  async function sessionWithTornTail(): Promise<{ store: SessionStore; kept: number }> {
    const store = openStore()
    await store.create({ id: 's' })
    await store.append('s', shortConversation())
    await store.close()
    // What a crash mid-append leaves: the start of a line with no newline.
    appendFileSync(historyFile('s'), '{"v":1,"role":"user","id":"half","crea')
    return { store: openStore(), kept: 4 }
  }

  test('a torn last line is reported and ignored on read', async () => {
    const { store, kept } = await sessionWithTornTail()
    expect(await store.read('s')).toEqual(shortConversation())
    expect(warnings).toEqual([
      { type: 'torn_tail', sessionId: 's', file: historyFile('s'), line: kept + 1, bytes: 38 },
    ])
  })

  test('the next append truncates the torn line before writing', async () => {
    const { store } = await sessionWithTornTail()
    const extra = new HistoryBuilder(2_000_000_000_000).user('after the crash')
    await store.append('s', [extra])
    expect(warnings).toEqual([
      { type: 'torn_tail_repaired', sessionId: 's', file: historyFile('s'), bytes: 38 },
    ])
    expect(await store.read('s')).toEqual([...shortConversation(), extra])
    expect(readFileSync(historyFile('s'), 'utf8').endsWith(`${encodeHistoryEvent(extra)}\n`)).toBe(true)
    expect((await store.info('s'))?.recordCount).toBe(5)
    expect(warnings).toHaveLength(1)
  })

  /**
   * Runs `between` once, after the next read of a history chunk that returned bytes and before the
   * reader's next read: what a writer elsewhere does while a reader is part-way through the file.
   */
  async function betweenReads(between: () => Promise<void>): Promise<void> {
    const probe = await open(join(dir, 'probe'), 'w')
    const proto = Object.getPrototypeOf(probe) as { read: (...args: unknown[]) => Promise<unknown> }
    await probe.close()
    const original = proto.read
    let armed = true
    vi.spyOn(proto, 'read').mockImplementation(async function (this: unknown, ...args: unknown[]) {
      const result = (await original.apply(this, args)) as { bytesRead: number }
      // The reader's chunks are 1 MiB; the writer's own reads (finding the torn tail) pass through.
      if (armed && (args[0] as Buffer).length === 1 << 20 && result.bytesRead > 0) {
        armed = false
        await between()
      }
      return result
    })
  }

  test.each(['read', 'readBatches'] as const)(
    'a %s that read a torn tail a new writer then cut off and wrote over reads the new record, not a corrupt line',
    async (how) => {
      const { store: reader } = await sessionWithTornTail()
      // Longer than the torn line: the reader's next read lands inside it.
      const extra = new HistoryBuilder(2_000_000_000_000).user(`after the crash ${'x'.repeat(100)}`)
      await betweenReads(() => openStore().append('s', [extra]))
      let events: HistoryEvent[] = []
      if (how === 'read') events = await reader.read('s')
      else for await (const batch of reader.readBatches!('s', { batchSize: 3 })) events.push(...batch)
      vi.restoreAllMocks()
      expect(events).toEqual([...shortConversation(), extra])
      expect(warnings).toEqual([
        { type: 'torn_tail_repaired', sessionId: 's', file: historyFile('s'), bytes: 38 },
      ])
    },
  )

  // A file written or edited elsewhere (a script joining lines with '\n', an editor that drops the
  // final newline) can end with a whole record and no newline. A write cut short never leaves one:
  // no prefix of a record's line is a record, so such a line is kept, never cut off as torn.
  test('a whole last record without its newline is read, counted and kept; the next writer ends its line', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.append('s', shortConversation())
    await store.close()
    const whole = readFileSync(historyFile('s'), 'utf8')
    writeFileSync(historyFile('s'), whole.slice(0, -1))

    const reader = openStore()
    expect(await reader.read('s')).toEqual(shortConversation())
    const batches: HistoryEvent[][] = []
    for await (const batch of reader.readBatches!('s', { batchSize: 3 })) batches.push(batch)
    expect(batches).toEqual([shortConversation().slice(0, 3), shortConversation().slice(3)])
    expect((await reader.info('s'))?.recordCount).toBe(4)
    expect(readFileSync(historyFile('s'), 'utf8')).toBe(whole.slice(0, -1))

    const extra = new HistoryBuilder(2_000_000_000_000).user('after the edit')
    await reader.append('s', [extra])
    expect(await reader.read('s')).toEqual([...shortConversation(), extra])
    expect(readFileSync(historyFile('s'), 'utf8')).toBe(`${whole}${encodeHistoryEvent(extra)}\n`)
    expect((await reader.info('s'))?.recordCount).toBe(5)
    expect(warnings).toEqual([])
  })

  test('a whole last line without its newline that is no record of this version is corrupt, never cut off', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.append('s', shortConversation())
    await store.close()
    // A record a newer Kode wrote: a whole line, which this version cannot read.
    const newer = '{"v":99,"role":"user","id":"newer","createdAt":1,"parts":[]}'
    appendFileSync(historyFile('s'), newer)
    const before = readFileSync(historyFile('s'), 'utf8')

    const reader = openStore()
    const error = await reader.read('s').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'corrupt_history', file: historyFile('s'), line: 5 })
    expect((error as Error).message).toContain('newer Kode')
    const extra = new HistoryBuilder(2_000_000_000_000).user('after it')
    await reader.append('s', [extra])
    expect(readFileSync(historyFile('s'), 'utf8')).toBe(`${before}\n${encodeHistoryEvent(extra)}\n`)
    expect(warnings).toEqual([])
  })

  test('a corrupt line in the middle fails the read naming file and line, and changes nothing', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.append('s', shortConversation())
    await store.close()
    const lines = readFileSync(historyFile('s'), 'utf8').split('\n')
    lines[2] = lines[2]!.replace('"role":"tool"', '"role":"robot"')
    const corrupted = lines.join('\n')
    writeFileSync(historyFile('s'), corrupted)

    const reader = openStore()
    const error = await reader.read('s').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CorruptHistoryError)
    expect(error).toMatchObject({ code: 'corrupt_history', file: historyFile('s'), line: 3, sessionId: 's' })
    expect((error as Error).message).toContain(`${historyFile('s')}:3:`)
    expect((error as Error).message).toContain('"robot"')
    expect(readFileSync(historyFile('s'), 'utf8')).toBe(corrupted)
  })

  // The store writes only UTF-8 (JSON escapes lone surrogates), so a complete line that is not
  // UTF-8 was damaged on disk or edited with another encoding: decoding it would swap its bytes
  // for U+FFFD and hand out a record that was never written.
  test('a line that is not valid UTF-8 is corrupt: named by file and line, never read with its bytes replaced', async () => {
    const records = mixedRecords(60)
    const store = openStore()
    await store.create({ id: 's' })
    await store.append('s', records)
    await store.close()
    const bytes = readFileSync(historyFile('s'))
    // Line 40 (index 39) is not ASCII; one byte of its first "é" (C3 A9) becomes "(".
    const lineStarts = [0]
    for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) lineStarts.push(i + 1)
    const e = bytes.indexOf(Buffer.from('é'), lineStarts[39])
    expect(e).toBeLessThan(lineStarts[40]!)
    bytes[e + 1] = 0x28
    writeFileSync(historyFile('s'), bytes)

    const reader = openStore()
    const error = await reader.read('s').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'corrupt_history', file: historyFile('s'), line: 40 })
    expect((error as Error).message).toContain('UTF-8')
    const handedOut: HistoryEvent[] = []
    const batched = await (async () => {
      for await (const batch of reader.readBatches!('s', { batchSize: 7 })) handedOut.push(...batch)
    })().catch((e: unknown) => e)
    expect(batched).toMatchObject({ code: 'corrupt_history', line: 40 })
    expect(handedOut).toEqual(records.slice(0, 35))
    expect(readFileSync(historyFile('s')).equals(bytes)).toBe(true)
  })

  // A create cut short by a crash leaves a directory without metadata and without records, which
  // the next create of that id takes over. A history with records and no metadata is a session
  // whose metadata was lost: it is no new session's, and must not become one.
  test('a history with records but no session.json is a session with unreadable metadata, never taken over by create', async () => {
    const store = openStore()
    await store.create({ id: 'lost', title: 'old' })
    await store.append('lost', shortConversation())
    await store.create({ id: 'crashed' })
    await store.close()
    unlinkSync(join(dir, 'lost', 'session.json'))
    unlinkSync(join(dir, 'crashed', 'session.json'))
    const bytes = readFileSync(historyFile('lost'))

    const reader = openStore()
    for (const call of [
      () => reader.info('lost'),
      () => reader.read('lost'),
      () => reader.create({ id: 'lost' }),
    ]) {
      const error = await call().catch((e: unknown) => e)
      expect(SessionError.is(error) && error.code).toBe('corrupt_metadata')
      expect((error as Error).message).toContain('session.json')
    }
    expect(readFileSync(historyFile('lost')).equals(bytes)).toBe(true)
    expect(await reader.list()).toEqual([])
    expect(warnings).toMatchObject([{ type: 'unreadable_session', sessionId: 'lost' }])
    // The directory a crashed create left is still taken over.
    expect(await reader.create({ id: 'crashed', title: 'again' })).toMatchObject({ recordCount: 0 })
    await reader.delete('lost')
    expect(readdirSync(dir)).toEqual(['crashed'])
  })

  test('unreadable metadata fails info with corrupt_metadata and list skips the session with a warning', async () => {
    const store = openStore()
    await store.create({ id: 'bad' })
    await store.create({ id: 'good' })
    await store.close()
    writeFileSync(join(dir, 'bad', 'session.json'), '{"v":1,"id":"bad"')
    const reader = openStore()
    const error = await reader.info('bad').catch((e: unknown) => e)
    expect(SessionError.is(error) && error.code).toBe('corrupt_metadata')
    expect((await reader.list()).map((s) => s.id)).toEqual(['good'])
    expect(warnings).toMatchObject([{ type: 'unreadable_session', sessionId: 'bad' }])
  })
})

describe('metadata: rewritten when it changes, not on every append', () => {
  const metaFile = () => join(dir, 's', 'session.json')
  const meta = () => JSON.parse(readFileSync(metaFile(), 'utf8'))

  test('an append leaves the metadata file alone; a reader derives count and time from the history', async () => {
    const writer = openStore({ now: () => 5_000 })
    await writer.create({ id: 's', title: 't' })
    const before = readFileSync(metaFile(), 'utf8')
    const [a, b, c, d] = shortConversation()
    await writer.append('s', [a!, b!])
    await writer.append('s', [c!, d!])
    expect(readFileSync(metaFile(), 'utf8')).toBe(before)
    expect(await writer.info('s')).toMatchObject({ recordCount: 4, updatedAt: 5_000 })
    expect(await openStore().info('s')).toMatchObject({
      title: 't',
      recordCount: 4,
      updatedAt: statSync(historyFile('s')).mtimeMs,
    })
  })

  test('once enough history has accumulated, an append rewrites it in the background', async () => {
    const writer = openStore()
    await writer.create({ id: 's' })
    const h = new HistoryBuilder()
    const big = () => h.user('x'.repeat(META_REWRITE_BYTES / 4))
    await writer.append('s', [big(), big(), big()])
    expect(meta()).toMatchObject({ recordCount: 0, byteLength: 0 })
    await writer.append('s', [big(), big()])
    await vi.waitFor(() => expect(meta()).toMatchObject({ recordCount: 5 }), { timeout: 10_000 })
    expect(meta().byteLength).toBe(statSync(historyFile('s')).size)
  })

  test('close writes the final metadata', async () => {
    const writer = openStore()
    await writer.create({ id: 's' })
    await writer.append('s', shortConversation())
    await writer.close()
    expect(meta()).toMatchObject({ recordCount: 4, byteLength: statSync(historyFile('s')).size })
  })

  // Two shutdown hooks may each close the store: the one awaited last must not resolve while the
  // first is still writing, or the host exits with the lock held and the metadata behind.
  test('a second close() resolves once the first has finished: metadata written, lock given back', async () => {
    const writer = openStore()
    await writer.create({ id: 's' })
    await writer.append('s', shortConversation())
    const first = writer.close()
    await writer.close()
    expect(readdirSync(join(dir, 's')).sort()).toEqual(['history.jsonl', 'session.json'])
    expect(meta()).toMatchObject({ recordCount: 4, byteLength: statSync(historyFile('s')).size })
    await first
  })

  test('a failed metadata write is reported, and the next append retries it', async () => {
    const writer = openStore()
    await writer.create({ id: 's', title: 'first' })
    await writer.append('s', shortConversation())
    mkdirSync(`${metaFile()}.tmp`) // the temp file cannot be written
    // The update's own write fails: the update is rejected and changes nothing.
    await expect(writer.update('s', { title: 'renamed' })).rejects.toThrow()
    expect(warnings).toMatchObject([{ type: 'metadata_write_failed', sessionId: 's', file: metaFile() }])
    expect(meta()).toMatchObject({ title: 'first', recordCount: 0 })
    rmSync(`${metaFile()}.tmp`, { recursive: true })
    // The metadata is still behind the history: the next append brings it in step.
    await writer.append('s', shortConversation())
    await vi.waitFor(() => expect(meta()).toMatchObject({ title: 'first', recordCount: 8 }), {
      timeout: 10_000,
    })
  })
})

// `onWarning` is the host's: a logger that throws must neither fail what the warning reports on
// (a read that skipped a torn line, a write that recovered) nor, from a background metadata write,
// surface as an unhandled rejection, which ends a Node process.
describe('an onWarning that throws', () => {
  const failing = (seen: StoreWarning[]) => (warning: StoreWarning) => {
    seen.push(warning)
    throw new Error('the logger is down')
  }

  test('a read that reports a torn line still returns the records', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.append('s', shortConversation())
    await store.close()
    appendFileSync(historyFile('s'), '{"v":1,"role":"user","id":"half","crea')
    const seen: StoreWarning[] = []
    const reader = openStore({ onWarning: failing(seen) })
    expect(await reader.read('s')).toEqual(shortConversation())
    expect(seen).toMatchObject([{ type: 'torn_tail' }])
    await reader.append('s', [new HistoryBuilder(2_000_000_000_000).user('after')])
    expect(seen).toMatchObject([{ type: 'torn_tail' }, { type: 'torn_tail_repaired' }])
    expect(await reader.read('s')).toHaveLength(5)
  })

  test('a background metadata write that fails is no unhandled rejection', async () => {
    const rejections: unknown[] = []
    const onRejection = (reason: unknown) => rejections.push(reason)
    process.on('unhandledRejection', onRejection)
    try {
      const seen: StoreWarning[] = []
      const store = openStore({ onWarning: failing(seen) })
      await store.create({ id: 's' })
      mkdirSync(join(dir, 's', 'session.json.tmp')) // the temp file cannot be written
      await expect(store.update('s', { title: 'renamed' })).rejects.toMatchObject({
        code: 'not_a_regular_file',
      })
      // The metadata write failed: the next append retries it in the background, and fails again.
      await store.append('s', shortConversation())
      await vi.waitFor(() => expect(seen).toHaveLength(2))
      await new Promise((resolve) => setImmediate(resolve))
      await new Promise((resolve) => setImmediate(resolve))
      expect(rejections).toEqual([])
      rmSync(join(dir, 's', 'session.json.tmp'), { recursive: true })
      await store.append('s', shortConversation())
      await store.close()
      expect(await openStore().info('s')).toMatchObject({ recordCount: 8 })
    } finally {
      process.off('unhandledRejection', onRejection)
    }
  })
})

describe('metadata behind the history', () => {
  test('another reader counts records the metadata does not account for yet', async () => {
    const writer = openStore()
    await writer.create({ id: 's' })
    await writer.append('s', shortConversation())
    await writer.close()
    // Records appended after the last metadata write (as after a crash between the two).
    const extra = new HistoryBuilder(2_000_000_000_000)
    appendFileSync(
      historyFile('s'),
      `${encodeHistoryEvent(extra.user('a'))}\n${encodeHistoryEvent(extra.user('b'))}\n`,
    )
    expect((await openStore().info('s'))?.recordCount).toBe(6)
  })

  test('the next writer brings the metadata file back in step', async () => {
    const writer = openStore()
    await writer.create({ id: 's' })
    await writer.close()
    appendFileSync(historyFile('s'), `${encodeHistoryEvent(new HistoryBuilder().user('a'))}\n`)
    const next = openStore()
    await next.update('s', { title: 't' })
    await next.close()
    expect(JSON.parse(readFileSync(join(dir, 's', 'session.json'), 'utf8'))).toMatchObject({
      recordCount: 1,
      title: 't',
    })
  })
})

describe('one writer per session', () => {
  test('a second store cannot append, update or delete while the first holds the session', async () => {
    const first = openStore()
    await first.create({ id: 's' })
    const second = openStore()
    for (const attempt of [
      second.append('s', shortConversation()),
      second.update('s', { title: 'x' }),
      second.delete('s'),
    ]) {
      const error = await attempt.catch((e: unknown) => e)
      expect(error).toBeInstanceOf(SessionLockedError)
      expect(error).toMatchObject({
        code: 'session_locked',
        holder: { pid: process.pid, hostname: hostname() },
      })
    }
    expect(await second.read('s')).toEqual([])
  })

  test('the session is free again once the holder closes', async () => {
    const first = openStore()
    await first.create({ id: 's' })
    await first.close()
    const second = openStore()
    await second.append('s', shortConversation())
    expect(await second.read('s')).toEqual(shortConversation())
  })

  test('a lock left by a process that no longer runs is removed with a warning', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.close()
    const dead = spawnSync(process.execPath, ['-e', '']).pid!
    const lock = { pid: dead, hostname: hostname(), acquiredAt: 1, token: 'old' }
    writeFileSync(join(dir, 's', 'writer.lock'), JSON.stringify(lock))
    await openStore().append('s', shortConversation())
    expect(warnings).toEqual([
      { type: 'stale_lock_removed', sessionId: 's', file: join(dir, 's', 'writer.lock'), pid: dead },
    ])
  })

  describe('a lock carrying our own pid', () => {
    const lockFile = () => join(dir, 's', 'writer.lock')
    async function lockedBy(lock: object) {
      const store = openStore()
      await store.create({ id: 's' })
      await store.close()
      writeFileSync(
        lockFile(),
        JSON.stringify({ pid: process.pid, hostname: hostname(), token: 'x', ...lock }),
      )
      return openStore()
        .append('s', shortConversation())
        .then(
          () => 'taken',
          (e: unknown) => e,
        )
    }

    test('is stale when an earlier process took it (a restarted container reuses pids)', async () => {
      expect(await lockedBy({ acquiredAt: Date.now(), processStart: ourStart() - 60_000 })).toBe('taken')
      expect(warnings).toEqual([
        { type: 'stale_lock_removed', sessionId: 's', file: lockFile(), pid: process.pid },
      ])
    })

    test('without a recorded process start, is stale when taken before this process started', async () => {
      const before = Date.now() - process.uptime() * 1000 - 60_000
      expect(await lockedBy({ acquiredAt: before })).toBe('taken')
      expect(warnings.map((w) => w.type)).toEqual(['stale_lock_removed'])
    })

    test('is live when this process took it', async () => {
      expect(await lockedBy({ acquiredAt: Date.now(), processStart: ourStart() })).toBeInstanceOf(
        SessionLockedError,
      )
      expect(warnings).toEqual([])
    })

    test('is live while another store of this process holds it, even if the process stalls while reading its start', async () => {
      const first = openStore()
      await first.create({ id: 's' })
      // A thread descheduled for a few ms between the clock readings the process start is
      // computed from (a loaded machine): played by a busy wait after each of the first three
      // real uptime readings.
      const uptime = process.uptime.bind(process)
      let stalls = 0
      const spy = vi.spyOn(process, 'uptime').mockImplementation(() => {
        const seconds = uptime()
        if (stalls < 3) {
          stalls++
          const until = performance.now() + 5
          while (performance.now() < until) {}
        }
        return seconds
      })
      try {
        const error = await openStore()
          .append('s', shortConversation())
          .catch((e: unknown) => e)
        expect(stalls).toBe(3)
        expect(error).toMatchObject({ code: 'session_locked', owner: 'this-process' })
        expect(warnings).toEqual([])
      } finally {
        spy.mockRestore()
      }
    })

    test('without a recorded process start, is live when taken since this process started', async () => {
      expect(await lockedBy({ acquiredAt: Date.now() })).toBeInstanceOf(SessionLockedError)
      expect(warnings).toEqual([])
    })
  })

  test('a lock held on another host is never judged stale', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.close()
    const lock = { pid: 1, hostname: `not-${hostname()}`, acquiredAt: 1, token: 'other' }
    writeFileSync(join(dir, 's', 'writer.lock'), JSON.stringify(lock))
    const error = await openStore()
      .append('s', shortConversation())
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SessionLockedError)
  })

  test('delete removes the directory and the lock with it', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.delete('s')
    expect(readdirSync(dir)).toEqual([])
  })
})

test('a history larger than the read chunk reads back exactly, multi-byte characters included', async () => {
  const store = openStore()
  await store.create({ id: 's' })
  const h = new HistoryBuilder()
  // ~3.5 MB: ASCII-only read chunks, then chunks with 2-, 3- and 4-byte characters across boundaries.
  const records = Array.from({ length: 40 }, (_, i) =>
    h.user(`${i} ${i < 20 ? 'ascii only '.repeat(8_000) : 'é—🙂 naïve café '.repeat(5_000)}`),
  )
  // And one line longer than the read chunk.
  records.push(h.user(`long ${'é—🙂 x'.repeat(400_000)}`))
  for (const record of records) await store.append('s', [record])
  expect(await store.read('s')).toEqual(records)
})

describe('reading in decode pieces', () => {
  // Records of 0.5-40 kB, some ASCII-only and some not, so pieces end at every kind of boundary.
  test('records of every size around the piece size read back exactly', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    const records = mixedRecords(300)
    await store.append('s', records)
    expect(await store.read('s')).toEqual(records)
  })

  test('no string decoded at once is larger than a piece (32 kB), unless it is one line', async () => {
    // V8 puts strings above ~128 kB in its large-object space, which made reads ~7x costlier.
    const store = openStore()
    await store.create({ id: 's' })
    const records = [...mixedRecords(300), new HistoryBuilder().user('x'.repeat(200_000))]
    await store.append('s', records)
    const decode = vi.spyOn(Buffer.prototype, 'toString')
    let lengths: number[]
    try {
      await store.read('s')
      lengths = decode.mock.calls.map(([, start, end]) => Number(end) - Number(start))
    } finally {
      decode.mockRestore()
    }
    const lineLengths = new Set(records.map((r) => Buffer.byteLength(encodeHistoryEvent(r))))
    expect(lengths.filter((n) => n > 32 * 1024 && !lineLengths.has(n))).toEqual([])
    expect(lengths.length).toBeLessThan(records.length)
  })

  test('a corrupt line past the first pieces is named by its line number', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.append('s', mixedRecords(300))
    await store.close()
    const lines = readFileSync(historyFile('s'), 'utf8').split('\n')
    lines[250] = lines[250]!.replace('"role":"user"', '"role":"robot"')
    writeFileSync(historyFile('s'), lines.join('\n'))
    const error = await openStore()
      .read('s')
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'corrupt_history', line: 251 })
  })
})

describe('readBatches over a file', () => {
  const collect = async (store: SessionStore, options?: { batchSize?: number }) => {
    const batches: HistoryEvent[][] = []
    for await (const batch of store.readBatches!('s', options)) batches.push(batch)
    return batches
  }

  test('a torn last line is reported once, after the records before it were handed out', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.append('s', shortConversation())
    await store.close()
    appendFileSync(historyFile('s'), '{"v":1,"role":"user","id":"half","crea')
    const batches = await collect(openStore(), { batchSize: 3 })
    expect(batches.flat()).toEqual(shortConversation())
    expect(warnings).toEqual([
      { type: 'torn_tail', sessionId: 's', file: historyFile('s'), line: 5, bytes: 38 },
    ])
  })

  test('a corrupt line fails the read naming file and line, after the batches before it', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.append('s', mixedRecords(300))
    await store.close()
    const lines = readFileSync(historyFile('s'), 'utf8').split('\n')
    lines[250] = lines[250]!.replace('"role":"user"', '"role":"robot"')
    writeFileSync(historyFile('s'), lines.join('\n'))
    const got: HistoryEvent[] = []
    const error = await (async () => {
      for await (const batch of openStore().readBatches!('s', { batchSize: 100 })) got.push(...batch)
    })().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CorruptHistoryError)
    expect(error).toMatchObject({ code: 'corrupt_history', file: historyFile('s'), line: 251 })
    expect(got.length).toBe(200)
  })

  test('a symlinked history file is refused, and nothing is read through it', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    await store.close()
    const target = join(dir, 'elsewhere.jsonl')
    writeFileSync(target, `${encodeHistoryEvent(new HistoryBuilder().user('secret'))}\n`)
    rmSync(historyFile('s'), { force: true })
    symlinkSync(target, historyFile('s'))
    const error = await collect(openStore()).catch((e: unknown) => e)
    expect(SessionError.is(error) && error.code).toBe('symlink_refused')
  })

  test('a file larger than the read buffer comes in batches of the size asked for', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    const h = new HistoryBuilder()
    await store.append(
      's',
      Array.from({ length: 2500 }, (_, i) => h.user(`${i} ${'ascii text '.repeat(60)}`)),
    )
    const batches = await collect(store, { batchSize: 400 })
    expect(batches.map((b) => b.length)).toEqual([400, 400, 400, 400, 400, 400, 100])
    expect(batches.flat()).toEqual(await store.read('s'))
  })

  test('line numbers and batch sizes hold across decoded pieces and read chunks', async () => {
    const store = openStore()
    await store.create({ id: 's' })
    const h = new HistoryBuilder()
    // ~0.7 kB a line: 2,500 lines span many 32 kB pieces and two 1 MiB reads; batches of 7 end
    // inside pieces.
    const history = Array.from({ length: 2500 }, (_, i) => h.user(`${i} ${'caf\u00e9 text '.repeat(60)}`))
    await store.append('s', history)
    await store.close()
    const whole = await collect(openStore(), { batchSize: 7 })
    expect(whole.slice(0, -1).every((b) => b.length === 7)).toBe(true)
    expect(whole.at(-1)).toHaveLength(2500 % 7)
    expect(whole.flat()).toEqual(history)
    const lines = readFileSync(historyFile('s'), 'utf8').split('\n')
    lines[2000] = lines[2000]!.replace('"role":"user"', '"role":"robot"')
    writeFileSync(historyFile('s'), lines.join('\n'))
    const got: HistoryEvent[] = []
    const error = await (async () => {
      for await (const batch of openStore().readBatches!('s', { batchSize: 7 })) got.push(...batch)
    })().catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'corrupt_history', file: historyFile('s'), line: 2001 })
    // The batches completed before the corrupt line, and none after it.
    expect(got).toEqual(history.slice(0, 1995))
  })
})

test('with fsync on, appends still read back', async () => {
  const store = openStore({ fsync: true })
  await store.create({ id: 's' })
  await store.append('s', shortConversation())
  expect(await store.read('s')).toEqual(shortConversation())
})
