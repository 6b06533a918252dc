import { SessionError, type SessionStore } from '@kode/session'
import { createPostgresSessionStore } from '@kode/session-postgres'
import pg from 'pg'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest'
import { dropSchema, freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'
import { launchChromium } from '../../../test/runtimes/chromium.js'
import { eventually, type Frame, type Running, readStream, startApp } from './helpers.js'

// A session another host deletes while this server (B) shows it, on a real Postgres: B's page in
// a real browser, or B's event stream read over HTTP.

const SESSION = '0b7c4c3e-3333-4aaa-8bbb-000000000003'

let browser: Browser
let schema: string
const cleanups: (() => Promise<void> | void)[] = []
beforeAll(async () => {
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
})
beforeEach(() => {
  schema = freshSchema()
})
afterEach(async () => {
  vi.restoreAllMocks()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await dropSchema(schema)
})

type PostgresStore = ReturnType<typeof createPostgresSessionStore>

const newStore = (): PostgresStore => {
  const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
  cleanups.push(() => store.close())
  return store
}
/** Server B on the test's schema, the scripted model; closed before its store. */
async function startB(store: SessionStore = newStore()): Promise<Running> {
  const b = await startApp({ store })
  cleanups.push(() => b.close())
  return b
}

/**
 * Ends the lease B's task holds on the session, as when B stalled (a long pause, a network cut)
 * past it: the store refuses to delete a session under a live lease. The test pauses nothing of its
 * own process, where B runs.
 */
async function expireLease(sessionId: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl() })
  await client.connect()
  try {
    await client.query(`update "${schema}".sessions set lease_expires_at = clock_timestamp() where id = $1`, [
      sessionId,
    ])
  } finally {
    await client.end()
  }
}

const user = (id: string, text: string) => ({
  role: 'user' as const,
  id,
  createdAt: 1,
  parts: [{ type: 'text' as const, text }],
})
const answer = (id: string, text: string) => ({
  role: 'assistant' as const,
  id,
  createdAt: 1,
  parts: [{ type: 'text' as const, text }],
  stopReason: 'stop' as const,
})
const post = (body?: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: body === undefined ? null : JSON.stringify(body),
})
/** Whether `done` settles within `ms`. */
const settles = (done: Promise<unknown>, ms: number) =>
  Promise.race([
    done.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ])

async function openPage(url: string): Promise<Page & { problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } })
  cleanups.push(() => context.close())
  const page = (await context.newPage()) as Page & { problems: string[] }
  page.problems = []
  page.on('pageerror', (error) => page.problems.push(`pageerror: ${error.message}`))
  await page.goto(url)
  return page
}

describe('a session deleted while this server runs a task in it', () => {
  test('the task stops, the page empties at once and says so, and what the id holds next shows from its start', async () => {
    // A session with a history, which B's page opens. (Deleting it under B's task needs B's lease
    // to have expired, so B's feed has followed it for a while by then: here, from the start.)
    const other = newStore()
    await other.create({ id: SESSION })
    await other.append(SESSION, [user('o1', 'earlier question')])
    const b = await startB()
    const page = await openPage(`${b.url}/?session=${SESSION}`)
    await page.waitForSelector('#transcript .user')
    await page.fill('#input', 'count')
    await page.click('#send')
    // "count" holds its response open until interrupted: the task runs until something stops it.
    await page.waitForFunction(() =>
      document.querySelector('#transcript .text')?.textContent?.includes('1, 2, 3'),
    )
    expect(await page.locator('#status').getAttribute('data-state')).toBe('running')

    const error = vi.spyOn(console, 'error')
    await expireLease(SESSION)
    await other.delete(SESSION)

    // The page shows the truth without waiting for the task: nothing, and why.
    await page.waitForFunction(() => document.querySelector('#transcript')?.childElementCount === 0, null, {
      timeout: 5_000,
    })
    await page.waitForSelector('#status[data-state="idle"]', { state: 'attached', timeout: 5_000 })
    expect(await page.locator('#status').innerText()).toBe(
      'This session was deleted; the task running in it here was stopped.',
    )
    expect(await page.locator('#send').isDisabled()).toBe(false)
    expect(await page.locator('#stop').isDisabled()).toBe(true)
    // B stopped its task, which wrote nothing more (the session stays deleted), quietly.
    expect(await settles(b.app.hub.idle(SESSION), 5_000)).toBe(true)
    expect(await other.info(SESSION)).toBeUndefined()
    expect(error).not.toHaveBeenCalled()

    // Another host creates a session under the id: the page shows it from its first record, even
    // though it holds fewer records than the deleted one did.
    await other.create({ id: SESSION })
    await other.append(SESSION, [user('n1', 'new question')])
    await page.waitForSelector('#transcript .user', { timeout: 5_000 })
    expect(await page.locator('#transcript .user').allInnerTexts()).toEqual(['new question'])

    // Deleted and created again twice in a row: the page ends with what the id holds last.
    await other.delete(SESSION)
    await other.create({ id: SESSION })
    await other.append(SESSION, [user('m1', 'middle question')])
    await other.delete(SESSION)
    await other.create({ id: SESSION })
    await other.append(SESSION, [user('l1', 'last question'), user('l2', 'last follow-up')])
    await page.waitForFunction(() => document.querySelectorAll('#transcript .user').length === 2, null, {
      timeout: 5_000,
    })
    expect(await page.locator('#transcript .user').allInnerTexts()).toEqual([
      'last question',
      'last follow-up',
    ])
    expect(await page.locator('#status').innerText()).toBe('This session was deleted.')
    expect(page.problems).toEqual([])
  })
})

describe('a session created and deleted while a page waits for it', () => {
  /** Whether B's store listens for notifications on the test's schema (its one LISTEN connection). */
  const listening = async () => {
    const client = new pg.Client({ connectionString: postgresUrl() })
    await client.connect()
    try {
      const { rows } = await client.query('select 1 from pg_stat_activity where query = $1', [
        `listen "${schema}_records"`,
      ])
      return rows.length > 0
    } finally {
      await client.end()
    }
  }

  test.each([
    ['with a record', [user('o1', 'short-lived question')]],
    ['empty', []],
  ])(
    'the page opened before the session existed says it was deleted, though it lived a moment only (%s)',
    async (_, records) => {
      const b = await startB()
      const page = await openPage(`${b.url}/?session=${SESSION}`)
      await page.waitForSelector('#status[data-state="idle"]', { state: 'attached' })
      // B's feed waits on the store's notifications for the session to be created.
      await eventually(listening, 5_000)

      // Another host creates the session and deletes it again, well within a second.
      const other = newStore()
      await other.create({ id: SESSION })
      if (records.length > 0) await other.append(SESSION, records)
      await other.delete(SESSION)

      await page.waitForFunction(
        () => document.querySelector('#status')?.textContent === 'This session was deleted.',
        null,
        { timeout: 5_000 },
      )
      expect(await page.locator('#transcript').evaluate((e) => e.childElementCount)).toBe(0)

      // What the id holds next shows from its first record.
      await other.create({ id: SESSION })
      await other.append(SESSION, [user('n1', 'new question')])
      await page.waitForSelector('#transcript .user', { timeout: 5_000 })
      expect(await page.locator('#transcript .user').allInnerTexts()).toEqual(['new question'])
      expect(page.problems).toEqual([])
    },
  )
})

describe('a session replaced before B follows what it read', () => {
  test.each([
    ['fewer records than B read', [user('o1', 'old one'), user('o2', 'old two'), user('o3', 'old three')]],
    ['records, where B read none', []],
  ])(
    'one created again with %s between the first read and the first follow shows from its first record',
    async (_, old) => {
      const other = newStore()
      await other.create({ id: SESSION })
      if (old.length > 0) await other.append(SESSION, old)
      const store = newStore()
      // B has read the session for its page; before its feed follows on, another host replaces the
      // session with one holding fewer records than B read.
      const follow = store.follow.bind(store)
      let replaced = false
      vi.spyOn(store, 'follow').mockImplementation(async function* (id, options) {
        if (!replaced) {
          replaced = true
          await other.delete(SESSION)
          await other.create({ id: SESSION })
          await other.append(SESSION, [user('n1', 'new question')])
        }
        yield* follow(id, options)
      })
      const b = await startB(store)
      const page = await openPage(`${b.url}/?session=${SESSION}`)

      await page.waitForFunction(
        () =>
          [...document.querySelectorAll('#transcript .user')].map((e) => e.textContent?.trim()).join('|') ===
          'new question',
        null,
        { timeout: 5_000 },
      )
      expect(replaced).toBe(true)
      expect(await page.locator('#status').innerText()).toBe('This session was deleted.')
      expect(page.problems).toEqual([])
    },
  )
})

/** The events of a stream, as the objects sent. */
const events = (frames: Frame[]) => frames.filter((f) => f.id !== undefined).map((f) => JSON.parse(f.data))
const userMessages = (frames: Frame[]) =>
  events(frames)
    .filter((e) => e.type === 'user_message')
    .map((e) => e.content)

/**
 * Reads B's stream of the session in the background until B closes: `frames` so far, `until` a
 * condition on them holds.
 */
function watch(url: string) {
  let frames: Frame[] = []
  let wake = () => {}
  readStream(`${url}/sessions/${SESSION}/events`, (seen) => {
    frames = seen
    wake()
    return false
  }).catch(() => {})
  return {
    frames: () => frames,
    until: (done: (seen: Frame[]) => boolean) =>
      new Promise<void>((resolve) => {
        wake = () => done(frames) && resolve()
        wake()
      }),
  }
}

/**
 * B's store, whose follows hold back a `session_not_found` (the feed learning of a deletion)
 * until `deliver()`: so a test orders what B learns late against what it does meanwhile.
 */
function lateNews(store: PostgresStore) {
  const follow = store.follow.bind(store)
  let held = () => {}
  const caught = new Promise<void>((resolve) => {
    held = resolve
  })
  let deliver = () => {}
  const delivered = new Promise<void>((resolve) => {
    deliver = resolve
  })
  const spy = vi.spyOn(store, 'follow').mockImplementation(async function* (id, options) {
    try {
      yield* follow(id, options)
    } catch (error) {
      if (SessionError.is(error) && error.code === 'session_not_found') {
        held()
        await delivered
      }
      throw error
    }
  })
  return { caught, deliver, spy }
}

/** Makes B's store wait in `method` for the sessions `which` picks until `proceed()`; `waits` once one does. */
function gate(store: PostgresStore, method: 'acquire' | 'read', which: (sessionId: string) => boolean) {
  const original = store[method].bind(store) as (sessionId: string) => Promise<never>
  let proceed = () => {}
  const open = new Promise<void>((resolve) => {
    proceed = resolve
  })
  let waiting = () => {}
  const waits = new Promise<void>((resolve) => {
    waiting = resolve
  })
  vi.spyOn(store, method).mockImplementation(async (sessionId: string) => {
    if (which(sessionId)) {
      waiting()
      await open
    }
    return original(sessionId)
  })
  return { waits, proceed }
}

describe('a deletion B learns of while its own task runs or starts', () => {
  test('a task B started after the delete, in what the id holds now, keeps its log and runs on', async () => {
    const other = newStore()
    await other.create({ id: SESSION })
    await other.append(SESSION, [user('o1', 'old question')])
    const store = newStore()
    const late = lateNews(store)
    const b = await startB(store)
    const reader = watch(b.url)
    await reader.until((seen) => userMessages(seen).includes('old question'))

    await other.delete(SESSION)
    await late.caught
    // B's task starts on what the id holds now (nothing: it creates the session again).
    expect((await fetch(`${b.url}/sessions/${SESSION}/messages`, post({ text: 'count' }))).status).toBe(202)
    await reader.until((seen) =>
      events(seen).some((e) => e.type === 'assistant_text_delta' && e.content.includes('3')),
    )
    const calls = late.spy.mock.calls.length
    late.deliver()
    // The feed has started over (it follows again from the start).
    await eventually(() => late.spy.mock.calls.length > calls)
    expect(await settles(b.app.hub.idle(SESSION), 500)).toBe(false)

    expect((await fetch(`${b.url}/sessions/${SESSION}/interrupt`, post())).status).toBe(204)
    await reader.until((seen) => events(seen).some((e) => e.type === 'task_finish'))
    const frames = reader.frames()
    // One reset: the task's own log replacing the deleted session's (a new log, not a prefix).
    expect(frames.filter((f) => f.event === 'reset').map((f) => JSON.parse(f.data))).toEqual([
      { reason: 'the replay started over' },
    ])
    const reset = frames.findIndex((f) => f.event === 'reset')
    expect(userMessages(frames.slice(reset + 1))).toEqual(['count'])
    expect(events(frames.slice(reset + 1)).at(-1)).toMatchObject({
      type: 'task_finish',
      reason: 'aborted',
    })
    const history = await other.read(SESSION)
    expect(history.filter((r) => 'role' in r && r.role === 'user')).toHaveLength(1)
  })

  test('a task B started after the delete and ended before B learned of it shows nothing of the deleted session', async () => {
    // The deleted session held more records than B's task writes, so a feed that took the task's
    // records for the first ones of the deleted session would show the rest after them.
    const other = newStore()
    await other.create({ id: SESSION })
    await other.append(SESSION, [
      ...[1, 2, 3].flatMap((n) => [user(`o${n}`, `old question ${n}`), answer(`a${n}`, `old answer ${n}`)]),
    ])
    const store = newStore()
    const late = lateNews(store)
    const b = await startB(store)
    const reader = watch(b.url)
    await reader.until((seen) => userMessages(seen).includes('old question 3'))

    await other.delete(SESSION)
    await late.caught
    // B's task creates the session again under the id and ends (a short reply) before B learns
    // of the deletion; then another host goes on in the session the task wrote.
    expect((await fetch(`${b.url}/sessions/${SESSION}/messages`, post({ text: 'hello' }))).status).toBe(202)
    await b.app.hub.idle(SESSION)
    await other.append(SESSION, [user('n2', 'after the task')])
    await settles(
      reader.until((seen) => userMessages(seen).includes('after the task')),
      5_000,
    )
    // Since the task's log replaced the deleted session's: the task, then what followed it.
    const sinceReset = (frames: Frame[]) => frames.slice(frames.findLastIndex((f) => f.event === 'reset') + 1)
    const old = (frames: Frame[]) => sinceReset(frames).filter((f) => f.data.includes('old '))
    expect(old(reader.frames())).toEqual([])
    expect(userMessages(sinceReset(reader.frames()))).toEqual(['hello', 'after the task'])

    // The news of the deletion, come late, does not empty a log that shows what the id holds now.
    const calls = late.spy.mock.calls.length
    late.deliver()
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(late.spy.mock.calls.length).toBe(calls)
    const frames = reader.frames()
    expect(frames.filter((f) => f.event === 'reset').map((f) => JSON.parse(f.data))).toEqual([
      { reason: 'the replay started over' },
    ])
    expect(old(frames)).toEqual([])
    expect(userMessages(sinceReset(frames))).toEqual(['hello', 'after the task'])
  })

  /**
   * Another host's session holding "old question", shown by B's page; B's store waits to take the
   * session (a task's start: its history read) until the test calls `proceed`.
   */
  async function startingOverOldQuestion() {
    const other = newStore()
    await other.create({ id: SESSION })
    await other.append(SESSION, [user('o1', 'old question')])
    const store = newStore()
    const { waits, proceed } = gate(store, 'acquire', () => true)
    const follows = vi.spyOn(store, 'follow')
    const b = await startB(store)
    const reader = watch(b.url)
    await reader.until((seen) => userMessages(seen).includes('old question'))
    return { other, waits, proceed, follows, b, reader }
  }

  test('a task that starts from the history of a session deleted meanwhile is stopped once it has started', async () => {
    const { other, waits, proceed, follows, b, reader } = await startingOverOldQuestion()

    const started = fetch(`${b.url}/sessions/${SESSION}/messages`, post({ text: 'count' }))
    await waits
    await other.delete(SESSION)
    // B's feed learns of it (and follows again from the start) while the task starts.
    await eventually(() => follows.mock.calls.length > 1)
    expect(reader.frames().some((f) => f.event === 'reset')).toBe(false)
    proceed()
    expect((await started).status).toBe(202)
    // The task took the session's id again from a deleted session's history: stopped at its start.
    expect(await settles(b.app.hub.idle(SESSION), 5_000)).toBe(true)
    const resets = reader
      .frames()
      .filter((f) => f.event === 'reset')
      .map((f) => JSON.parse(f.data))
    expect(resets).toEqual([{ reason: 'the session was deleted', deleted: true, stoppedTask: true }])
  })

  test('a task that could not start leaves the log of a session deleted meanwhile empty', async () => {
    const { other, waits, proceed, follows, b, reader } = await startingOverOldQuestion()

    // A continuation, refused once it has read the session it takes: there is nothing to carry on.
    const continued = fetch(`${b.url}/sessions/${SESSION}/continue`, post())
    await waits
    await other.delete(SESSION)
    await eventually(() => follows.mock.calls.length > 1)
    proceed()
    expect((await continued).status).toBe(409)
    await reader.until((seen) => seen.some((f) => f.event === 'reset'))
    expect(
      reader
        .frames()
        .filter((f) => f.event === 'reset')
        .map((f) => JSON.parse(f.data)),
    ).toEqual([{ reason: 'the session was deleted', deleted: true, stoppedTask: false }])
    // What the id holds from now on shows from its start.
    // (The engine may have created the session again, empty, to take it.)
    if (!(await other.info(SESSION))) await other.create({ id: SESSION })
    await other.append(SESSION, [user('n1', 'new question')])
    await reader.until((seen) => userMessages(seen).includes('new question'))
    const frames = reader.frames()
    expect(userMessages(frames.slice(frames.findIndex((f) => f.event === 'reset') + 1))).toEqual([
      'new question',
    ])
  })
})

describe('a session deleted while B replays what another host appended', () => {
  /** A call of `explore` whose result links the sub-agent session `child`, which answered `answer`. */
  const delegated = async (store: SessionStore, n: string, child: string, answer: string) => {
    await store.create({ id: child, parentSessionId: SESSION, subAgent: { name: 'explore' } })
    await store.append(child, [
      user(`${n}cu`, `look it up (${n})`),
      {
        role: 'assistant',
        id: `${n}ca`,
        createdAt: 1,
        parts: [{ type: 'text', text: answer }],
        stopReason: 'stop',
      },
    ])
    return [
      {
        role: 'assistant' as const,
        id: `${n}a`,
        createdAt: 1,
        parts: [{ type: 'tool_call' as const, id: `${n}call`, name: 'explore', argumentsJson: '{}' }],
        stopReason: 'tool_use' as const,
      },
      {
        role: 'tool' as const,
        id: `${n}t`,
        createdAt: 1,
        toolCallId: `${n}call`,
        toolName: 'explore',
        status: 'success' as const,
        outputText: answer,
        parts: [],
        uiExtra: { type: 'session' as const, sessionId: child },
      },
    ]
  }
  const OLD_CHILD = '0b7c4c3e-3333-4aaa-8bbb-0000000000c1'
  const NEW_CHILD = '0b7c4c3e-3333-4aaa-8bbb-0000000000c2'

  test('the new session’s sub-agents show, not the deleted one’s', async () => {
    const other = newStore()
    await other.create({ id: SESSION })
    await other.append(SESSION, [user('o1', 'old question')])
    const store = newStore()
    // B's read of the old sub-agent's session waits until the test lets it go on.
    const { waits, proceed } = gate(store, 'read', (id) => id === OLD_CHILD)
    const follows = vi.spyOn(store, 'follow')
    const b = await startB(store)
    const reader = watch(b.url)
    await reader.until((seen) => userMessages(seen).includes('old question'))

    // Another host's call links a sub-agent: B loads its session to replay it.
    await other.append(SESSION, await delegated(other, 'o', OLD_CHILD, 'old answer'))
    await waits
    // Meanwhile the session is deleted and created again, with one sub-agent link too.
    await other.delete(SESSION)
    await other.create({ id: SESSION })
    await other.append(SESSION, [
      user('n1', 'new question'),
      ...(await delegated(other, 'n', NEW_CHILD, 'new answer')),
    ])
    await eventually(() => follows.mock.calls.length > 1)
    proceed()

    await reader.until((seen) => events(seen).some((e) => e.type === 'tool_result'))
    const frames = reader.frames()
    const after = events(frames.slice(frames.findLastIndex((f) => f.event === 'reset') + 1))
    // The sub-agent's own events come before its call's result, from the new sub-agent's session.
    const messages = after.filter((e) => e.type === 'user_message').map((e) => [e.sessionId, e.content])
    expect(messages).toEqual([
      [SESSION, 'new question'],
      [NEW_CHILD, 'look it up (n)'],
    ])
  })
})
