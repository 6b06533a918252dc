import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { createFileSessionStore, type SessionStore, type StoreWarning } from '@kode/session'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { bundleForNode } from './helpers/bundle.js'

// Real processes against one store directory: a writer killed with SIGKILL mid-append, and two
// writers competing for one session.

let child: string
let dir: string
const running: ChildProcess[] = []

beforeAll(async () => {
  child = await bundleForNode(resolve(import.meta.dirname, 'processes/store-child.ts'))
}, 60_000)
afterAll(() => rmSync(resolve(child, '..'), { recursive: true, force: true }))
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kode-processes-'))
  const store = createFileSessionStore({ dir })
  await store.create({ id: 's' })
  await store.close()
})
afterEach(() => {
  for (const process of running.splice(0)) process.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

interface Child {
  process: ChildProcess
  /** Every stdout line so far. */
  lines: string[]
  /** Resolves with the first line (seen or coming) that matches. */
  line(match: (line: string) => boolean): Promise<string>
  exited: Promise<number | null>
}

function start(...args: string[]): Child {
  const proc = spawn(process.execPath, [child, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  running.push(proc)
  const lines: string[] = []
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = []
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    lines.push(line)
    for (const waiter of waiters.filter((w) => w.match(line))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(line)
    }
  })
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)))
  return {
    process: proc,
    lines,
    exited,
    line: (match) =>
      new Promise((resolve, reject) => {
        const seen = lines.find(match)
        if (seen !== undefined) return resolve(seen)
        waiters.push({ match, resolve })
        exited.then((code) =>
          reject(new Error(`child exited (${code}) before the line; got ${lines.join(' | ')}`)),
        )
      }),
  }
}

function reader(warnings: StoreWarning[]): SessionStore {
  return createFileSessionStore({ dir, onWarning: (w) => warnings.push(w) })
}

describe('a writer killed with SIGKILL mid-append', () => {
  test('loses nothing that was acknowledged, and the next writer repairs and continues', async () => {
    // Large records make a kill during the write (leaving a torn line) likely, not certain.
    const writer = start('loop', dir, 's', String(512 * 1024))
    await writer.line((line) => line === 'ack 30')
    writer.process.kill('SIGKILL')
    await writer.exited
    const acked = writer.lines.filter((l) => l.startsWith('ack ')).length

    const warnings: StoreWarning[] = []
    const store = reader(warnings)
    const ids = (await store.read('s')).map((e) => e.id)
    // A gap-free prefix of what was written, holding every acknowledged record.
    expect(ids).toEqual(ids.map((_, i) => `rec-${i}`))
    expect(ids.length).toBeGreaterThanOrEqual(acked)
    const tornOnRead = warnings.filter((w) => w.type === 'torn_tail')
    expect(tornOnRead.length).toBeLessThanOrEqual(1)

    warnings.length = 0
    await store.append('s', [{ role: 'user', id: 'after', createdAt: 1, parts: [] }])
    expect(warnings.map((w) => w.type).sort()).toEqual(
      [...(tornOnRead.length ? ['torn_tail_repaired'] : []), 'stale_lock_removed'].sort(),
    )
    warnings.length = 0
    expect((await store.read('s')).map((e) => e.id)).toEqual([...ids, 'after'])
    expect(warnings).toEqual([])
    expect(await store.info('s')).toMatchObject({ recordCount: ids.length + 1 })
    await store.close()
    expect(readFileSync(join(dir, 's', 'history.jsonl'), 'utf8').endsWith('\n')).toBe(true)
  })
})

describe('two processes writing one session', () => {
  test('the second is refused while the first holds the session, and succeeds after it closes', async () => {
    const holder = start('hold', dir, 's')
    await holder.line((line) => line === 'ready')

    const refused = start('try', dir, 's')
    expect(await refused.line(() => true)).toBe(`session_locked ${holder.process.pid}`)

    holder.process.stdin!.write('close\n')
    await holder.line((line) => line === 'closed')
    expect(await holder.exited).toBe(0)

    const second = start('try', dir, 's')
    expect(await second.line(() => true)).toBe('ok')
    await second.exited

    const store = reader([])
    expect((await store.read('s')).map((e) => e.id)).toEqual([
      `held-${holder.process.pid}`,
      `try-${second.process.pid}`,
    ])
    await store.close()
  })

  test('a session whose writer was killed is taken over by the next process', async () => {
    const holder = start('hold', dir, 's')
    await holder.line((line) => line === 'ready')
    holder.process.kill('SIGKILL')
    await holder.exited

    const next = start('try', dir, 's')
    expect(await next.line(() => true)).toBe('ok')
  })
})
