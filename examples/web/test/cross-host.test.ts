import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { deriveReplayEvents, type SessionStore } from '@kode/session'
import { createPostgresSessionStore } from '@kode/session-postgres'
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { dropSchema, freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'
import { saveNoteTool } from '../src/note-tool.js'
import { type Frame, type Running, readStream, startApp, typeOf } from './helpers.js'

// Two servers sharing one Postgres: host A, the built example server in its own process, runs the
// tasks; host B, in this process, serves a page that watches them through the store's live feed.

// The Postgres comes from the session-postgres tests' global setup (see vitest.workspace.ts),
// which provides its URL to this project too.
declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

const server = fileURLToPath(new URL('../dist/server/server.js', import.meta.url))
const SESSION = '0b7c4c3e-2222-4aaa-8bbb-000000000002'

let schema: string
let dir: string
const cleanups: (() => Promise<void> | void)[] = []
beforeEach(() => {
  schema = freshSchema()
  dir = mkdtempSync(join(tmpdir(), 'kode-web-hosts-'))
})
afterEach(async () => {
  vi.restoreAllMocks()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await dropSchema(schema)
  rmSync(dir, { recursive: true, force: true })
})

/** Host A: `node dist/server/server.js` on a free port, sessions in the test's schema, offline model. */
async function startHostA(): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [server], {
    cwd: dir,
    // Only what the server needs: no API key reaches it, so it runs the scripted model.
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      KODE_POSTGRES_URL: postgresUrl(),
      KODE_POSTGRES_SCHEMA: schema,
      KODE_SCRIPTED_DELAY_MS: '1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise((resolve) => child.on('close', resolve))
  cleanups.push(async () => {
    child.kill('SIGTERM')
    await exited
  })
  for await (const line of createInterface({ input: child.stdout! })) {
    const url = /on (http:\/\/\S+)/.exec(line)?.[1]
    if (url) return url
  }
  throw new Error('host A exited before it listened')
}

/** Host B: the example app in this process, on the same database. */
async function startHostB(
  store = createPostgresSessionStore({ connectionString: postgresUrl(), schema }),
): Promise<{ b: Running; store: SessionStore }> {
  const b = await startApp({ store, tools: [saveNoteTool(join(dir, 'notes-b.md'))] })
  cleanups.push(async () => {
    await b.close()
    await store.close()
  })
  return { b, store }
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
/** The events of a stream, as the objects sent. */
const events = (frames: Frame[]) => frames.filter((f) => f.id !== undefined).map((f) => JSON.parse(f.data))
/** Stops once the stream carried `n` events of `type`. */
const nth = (type: string, n: number) => (frames: Frame[]) =>
  frames.filter((f) => f.id !== undefined && typeOf(f) === type).length >= n

describe('a page on host B follows tasks that run on host A', () => {
  test('a task on A reaches B as its replay, exactly, and B resumes a reconnect with Last-Event-ID', async () => {
    const a = await startHostA()
    const { b, store } = await startHostB()
    const stream = `${b.url}/sessions/${SESSION}/events`
    // B's reader is there before the session exists: A creates it with the first message.
    const watching = readStream(stream, nth('task_metadata', 1))
    expect((await post(`${a}/sessions/${SESSION}/messages`, { text: 'hello' })).status).toBe(202)
    const watched = await watching
    const history = await store.read(SESSION)
    // What B showed is the replay of what A wrote, each event once, nothing before or after.
    expect(events(watched)).toEqual(
      JSON.parse(JSON.stringify(deriveReplayEvents(history, { sessionId: SESSION }))),
    )
    expect(watched.every((f) => f.event === undefined)).toBe(true)
    // A reconnect to B with an id from the middle gets exactly the rest.
    const cut = Math.floor(watched.length / 2)
    const rest = await readStream(stream, nth('task_metadata', 1), watched[cut - 1]!.id)
    expect(rest).toEqual(watched.slice(cut))
  })

  test('a message on B as A’s task ends: B’s page shows A’s task, then B’s, each once', async () => {
    const a = await startHostA()
    const inner = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
    // A's whole task runs between B's read of the session and B's task taking it: B's task goes
    // on from A's records, which the history B read does not hold.
    let raced = false
    const store = new Proxy(inner, {
      get(target, key) {
        if (key !== 'acquire') {
          const value: unknown = Reflect.get(target, key)
          return typeof value === 'function' ? value.bind(target) : value
        }
        return async (id: string) => {
          if (!raced) {
            raced = true
            expect((await post(`${a}/sessions/${id}/messages`, { text: 'hello from A' })).status).toBe(202)
          }
          // A's lease is taken back once its task has ended.
          for (;;) {
            try {
              return await target.acquire(id)
            } catch (error) {
              if ((error as { code?: string }).code !== 'session_locked') throw error
              await new Promise((resolve) => setTimeout(resolve, 20))
            }
          }
        }
      },
    })
    const { b } = await startHostB(store)
    const stream = `${b.url}/sessions/${SESSION}/events`
    const watching = readStream(stream, nth('task_finish', 1))
    expect((await post(`${b.url}/sessions/${SESSION}/messages`, { text: 'hello from B' })).status).toBe(202)
    const got = events(await watching)
    expect(got.filter((e) => e.type === 'user_message').map((e) => e.content)).toEqual([
      'hello from A',
      'hello from B',
    ])
    expect(got.filter((e) => e.type === 'task_metadata')).toHaveLength(2)
    await b.app.hub.idle(SESSION)
    // A page opened afterwards sees the same.
    expect(events(await readStream(stream, nth('task_finish', 1)))).toEqual(got)
  })

  test('B decides an approval for a task A started, then follows A’s next task after its own events', async () => {
    const a = await startHostA()
    const { b, store } = await startHostB()
    const stream = `${b.url}/sessions/${SESSION}/events`
    const frames: Frame[] = []
    // One reader stays on B the whole time; the conditions below read what it has so far.
    let wake = () => {}
    const reader = readStream(stream, (seen) => {
      frames.splice(0, frames.length, ...seen)
      wake()
      return nth('task_metadata', 3)(seen)
    })
    const until = (done: (seen: Frame[]) => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (done(frames)) resolve()
          else wake = check
        }
        check()
      })

    // 1. A runs a task that ends awaiting approval of save_note; B shows the pending call.
    expect((await post(`${a}/sessions/${SESSION}/messages`, { text: 'save a note: buy milk' })).status).toBe(
      202,
    )
    await until(nth('task_metadata', 1))
    const call = events(frames).find((e) => e.type === 'tool_approval_request')
    expect(call).toMatchObject({ toolName: 'save_note' })

    // 2. The page on B approves: B continues the task itself, its live events on the same stream.
    expect(
      (
        await post(`${b.url}/sessions/${SESSION}/approvals`, {
          approvals: [{ toolCallId: call.toolCallId, approved: true }],
        })
      ).status,
    ).toBe(202)
    await until(nth('task_finish', 1))
    await b.app.hub.idle(SESSION)

    // 3. A runs the next task; B shows it after its own events, as A's records are committed.
    const before = (await store.read(SESSION)).length
    expect((await post(`${a}/sessions/${SESSION}/messages`, { text: 'hello again' })).status).toBe(202)
    const final = await reader
    const history = await store.read(SESSION)
    const replay = JSON.parse(JSON.stringify(deriveReplayEvents(history, { sessionId: SESSION })))
    const previous = deriveReplayEvents(history.slice(0, before), { sessionId: SESSION }).length
    const got = events(final)
    const afterB = got.findIndex((e) => e.type === 'task_finish') + 1
    expect(got.slice(afterB)).toEqual(replay.slice(previous))
    expect(got.slice(afterB)[0]).toMatchObject({ type: 'user_message', content: 'hello again' })
    // No reset, and every id once.
    expect(final.every((f) => f.event === undefined)).toBe(true)
    expect(new Set(final.map((f) => f.id)).size).toBe(final.length)
    // The tool ran once, on B.
    expect(history.filter((r) => 'role' in r && r.role === 'tool')).toHaveLength(1)
    // A reconnect with the id of A's user message gets exactly what followed it; one with an id
    // of the log before B's own task (which started a new log) gets a reset, then the same events.
    const hello = final.findIndex(
      (f) => f.id !== undefined && typeOf(f) === 'user_message' && f.data.includes('hello again'),
    )
    expect(await readStream(stream, nth('task_metadata', 1), final[hello]!.id)).toEqual(
      final.slice(hello + 1),
    )
    const restart = await readStream(stream, nth('task_metadata', 3), final[0]!.id)
    expect(restart[0]).toMatchObject({ event: 'reset' })
    expect(events(restart)).toEqual(got)
  })
})

describe('a page on host B follows a session that another host deletes and creates again', () => {
  const user = (id: string, text: string) => ({
    role: 'user' as const,
    id,
    createdAt: 1,
    parts: [{ type: 'text' as const, text }],
  })
  const userMessages = (frames: Frame[]) =>
    events(frames)
      .filter((e) => e.type === 'user_message')
      .map((e) => e.content)
  /**
   * Reads B's event stream of the session until the user message `last` shows. Resolves once
   * `first` has shown, with the read still going: `frames`, all it will have seen.
   */
  const readUntil = async (url: string, first: string, last: string) => {
    let seen: Frame[] = []
    let wake = () => {}
    const frames = readStream(`${url}/sessions/${SESSION}/events`, (read) => {
      seen = read
      wake()
      return userMessages(read).includes(last)
    })
    await new Promise<void>((resolve) => {
      wake = () => userMessages(seen).includes(first) && resolve()
      wake()
    })
    return { frames }
  }

  test('B shows the new session from its start, not its records after the old one’s', async () => {
    const other = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
    cleanups.push(() => other.close())
    await other.create({ id: SESSION })
    await other.append(SESSION, [user('o1', 'old question'), user('o2', 'old follow-up')])
    const { b } = await startHostB()
    const reader = (await readUntil(b.url, 'old follow-up', 'new follow-up')).frames

    // Deleted and created again under its id, with more records than B has seen: following on
    // from B's position alone would carry on with the new session's third record.
    await other.delete(SESSION)
    await other.create({ id: SESSION })
    await other.append(SESSION, [
      user('n1', 'new question'),
      user('n2', 'new answer'),
      user('n3', 'new follow-up'),
    ])
    const frames = await reader
    const reset = frames.findLastIndex((f) => f.event === 'reset')
    expect(reset).toBeGreaterThan(-1)
    expect(userMessages(frames.slice(reset + 1))).toEqual(['new question', 'new answer', 'new follow-up'])
  })

  test('B’s feed, following again after a failure, passes the incarnation it saw and starts over with the new session', async () => {
    const other = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
    cleanups.push(() => other.close())
    await other.create({ id: SESSION })
    const kept = user('o2', 'kept record')
    await other.append(SESSION, [user('o1', 'old question'), kept])
    // B's first follow fails on demand, as one does when its database connection is lost.
    const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
    const follow = store.follow.bind(store)
    let lose = () => {}
    const lost = new Promise<never>((_, reject) => {
      lose = () => reject(new Error('Connection terminated unexpectedly'))
    })
    lost.catch(() => {})
    let yielded = () => {}
    const followed = new Promise<void>((resolve) => {
      yielded = resolve
    })
    const spy = vi.spyOn(store, 'follow').mockImplementationOnce(async function* (id, options) {
      const records = follow(id, options)[Symbol.asyncIterator]()
      try {
        for (;;) {
          const next = await Promise.race([records.next(), lost])
          if (next.done) return
          yield next.value
          yielded()
        }
      } finally {
        await records.return?.()
      }
    })
    const { b } = await startHostB(store)
    const reader = (await readUntil(b.url, 'kept record', 'new follow-up')).frames
    // The feed has followed a record, so it knows the session's incarnation.
    await followed

    // While B waits to follow again, the session is created again: the record at B's last
    // position is the same, so only the incarnation tells the two sessions apart.
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    lose()
    await other.delete(SESSION)
    await other.create({ id: SESSION })
    await other.append(SESSION, [user('n1', 'new question'), kept, user('n3', 'new follow-up')])
    const frames = await reader
    expect(error).toHaveBeenCalledTimes(1)
    const reset = frames.findLastIndex((f) => f.event === 'reset')
    expect(reset).toBeGreaterThan(-1)
    expect(userMessages(frames.slice(reset + 1))).toEqual(['new question', 'kept record', 'new follow-up'])
    expect(spy.mock.calls[1]?.[1]).toMatchObject({ from: 1, incarnation: expect.any(String) })
  })
})
