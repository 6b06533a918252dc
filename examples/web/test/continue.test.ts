import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineSubAgent } from '@kode/core'
import { checkEventOrder, type HistoryEvent } from '@kode/protocol'
import { createClient } from '@kode/providers'
import { createSseTestServer, type SseTestServer, scriptedResponse } from '@kode/providers/testing'
import { createMemorySessionStore, deriveReplayEvents, type SessionStore } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { createPostgresSessionStore } from '@kode/session-postgres'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { dropSchema, freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'
import { crashTools } from './crash-tools.js'
import { type Frame, readStream, startApp } from './helpers.js'

// What a task's process leaves when it dies (the records it had made durable, no task end), and
// a page on this server reading the session across the task that carries it on. The memory store
// follows its sessions (as Postgres does across hosts), the file store does not: the page must
// see one stream in a valid order, with no reset, either way.

const reply = (id: string, text: string) => scriptedResponse('openai-chat', { id, steps: [{ text }] })
const SESSION = '0b7c4c3e-4444-4aaa-8bbb-000000000005'
const at = (n: number) => 1_767_225_600_000 + n * 1000

const user: HistoryEvent = {
  role: 'user',
  id: 'u1',
  createdAt: at(0),
  parts: [{ type: 'text', text: 'Look it up' }],
}
const call: HistoryEvent = {
  role: 'assistant',
  id: 'a1',
  createdAt: at(1),
  responseId: 'r1',
  parts: [{ type: 'tool_call', id: 'l1', name: 'lookup', argumentsJson: '{}' }],
  stopReason: 'tool_use',
  model: 'gpt-4o',
  provider: 'openai',
}
const result: HistoryEvent = {
  role: 'tool',
  id: 't1',
  createdAt: at(2),
  toolCallId: 'l1',
  toolName: 'lookup',
  status: 'success',
  outputText: 'invoice 42: 500 cents',
  parts: [],
}

let model: SseTestServer
let dir: string
beforeAll(async () => {
  model = await createSseTestServer()
})
afterAll(() => model.close())
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const stores: [string, () => SessionStore][] = [
  ['memory (follows)', () => createMemorySessionStore()],
  [
    'file (does not follow)',
    () => {
      dir = mkdtempSync(join(tmpdir(), 'kode-web-continue-'))
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
      return createFileSessionStore({ dir })
    },
  ],
]

const events = (frames: Frame[]) =>
  frames.filter((f) => f.id !== undefined).map((f) => JSON.parse(f.data) as { type: string })
const finished = (frames: Frame[]) => events(frames).some((e) => e.type === 'task_finish')

/** Starts the app on `store` holding `records`, with a page reading the session; `act` starts a task. */
async function watch(store: SessionStore, records: HistoryEvent[], act: (url: string) => Promise<Response>) {
  await store.create({ id: SESSION })
  await store.append(SESSION, records)
  const client = createClient({ api: 'openai-chat', model: 'gpt-4o', apiKey: 'sk-test', baseUrl: model.url })
  const app = await startApp({ store, client, tools: crashTools({ host: 'b', log: () => {} }) })
  cleanups.push(() => app.close())
  const stream = `${app.url}/sessions/${SESSION}/events`
  let seen: Frame[] = []
  const page = readStream(stream, (frames) => {
    seen = frames
    return finished(frames)
  })
  // The page shows the stored history before the task starts.
  const replayed = deriveReplayEvents(records, { sessionId: SESSION }).filter((e) => e.type !== 'turn_end')
  while (events(seen).filter((e) => e.type !== 'turn_end').length < replayed.length)
    await new Promise((resolve) => setTimeout(resolve, 10))
  const shown = seen.slice()
  expect((await act(app.url)).status).toBe(202)
  const frames = await page
  await app.app.hub.idle(SESSION)
  // One stream: no reset, what was shown its prefix, each id once, a valid order of events.
  expect(frames.every((f) => f.event === undefined)).toBe(true)
  expect(frames.slice(0, shown.length)).toEqual(shown)
  expect(new Set(frames.map((f) => f.id)).size).toBe(frames.length)
  const got = events(frames)
  // A page opened afterwards sees exactly the same events.
  expect(events(await readStream(stream, finished))).toEqual(got)
  return {
    shown: events(shown).map((e) => e.type),
    after: got.slice(shown.length).map((e) => e.type),
    order: checkEventOrder(got as never).map((problem) => problem.message),
  }
}

const TEXT_TURN = [
  'turn_start',
  'context_usage',
  'assistant_text_start',
  'assistant_text_delta',
  'assistant_text_end',
  'response_complete',
  'usage',
  'context_usage',
  'turn_end',
  'task_metadata',
  'task_finish',
]

describe.each(stores)('a task that died, carried on with a page reading (%s store)', (_name, makeStore) => {
  test('between turns: `continue` closes the replayed turn once and opens a new one', async () => {
    model.enqueue(reply('r2', 'Done.'))
    const { shown, after, order } = await watch(makeStore(), [user, call, result], (url) =>
      fetch(`${url}/sessions/${SESSION}/continue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      }),
    )
    expect([...shown, ...after]).toEqual([
      'user_message',
      'turn_start',
      'response_complete',
      'tool_call',
      'tool_result',
      'turn_end',
      'task_start',
      ...TEXT_TURN,
    ])
    expect(order).toEqual([])
  })

  test('inside a turn, then a new message: the new task answers the call and ends the open turn first', async () => {
    model.enqueue(reply('r2', 'Done.'))
    const { shown, after, order } = await watch(makeStore(), [user, call], (url) =>
      fetch(`${url}/sessions/${SESSION}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'What happened?' }),
      }),
    )
    // The page shows the dead task's turn open (its call has no result), then its end.
    expect(shown).toEqual(['user_message', 'turn_start', 'response_complete', 'tool_call'])
    // The new task answers the call in the turn the dead task left open, ends it, then runs.
    expect(after).toEqual(['task_start', 'tool_result', 'turn_end', 'user_message', ...TEXT_TURN])
    expect(order).toEqual([])
  })
})

describe.each(stores)('a session that never existed (%s store)', (_name, makeStore) => {
  test('`continue` and decisions are refused, and leave no session behind', async () => {
    const store = makeStore()
    const client = createClient({
      api: 'openai-chat',
      model: 'gpt-4o',
      apiKey: 'sk-test',
      baseUrl: model.url,
    })
    const app = await startApp({ store, client })
    cleanups.push(() => app.close())
    const never = '0b7c4c3e-4444-4aaa-8bbb-00000000dead'
    const requests = model.requests.length
    const carryOn = await fetch(`${app.url}/sessions/${never}/continue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    })
    expect(carryOn.status).toBe(409)
    expect(((await carryOn.json()) as { error: string }).error).toMatch(/^nothing to carry on: /)
    const decide = await fetch(`${app.url}/sessions/${never}/approvals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ approvals: [{ toolCallId: 'c1', approved: true }] }),
    })
    expect(decide.status).toBe(409)
    expect(((await decide.json()) as { error: string }).error).toMatch(/do not fit what awaits approval/)
    await app.app.hub.idle(never)
    expect(await store.info(never)).toBeUndefined()
    expect(await store.list()).toEqual([])
    expect(model.requests).toHaveLength(requests)
  })
})

/**
 * The stores of the sub-agent case, each with the store the dead process's lease is held through:
 * the same one for the memory and file stores (their leases hold within one store), another host's
 * store for Postgres.
 */
const leaseStores: [string, () => { store: SessionStore; holder: SessionStore }][] = [
  ...stores.map(([name, make]): [string, () => { store: SessionStore; holder: SessionStore }] => [
    name,
    () => {
      const store = make()
      return { store, holder: store }
    },
  ]),
  [
    'postgres, another host holding the lease, as a',
    () => {
      const schema = freshSchema()
      const open = () => createPostgresSessionStore({ connectionString: postgresUrl(), schema })
      const [store, holder] = [open(), open()]
      cleanups.push(async () => {
        await Promise.all([store.close(), holder.close()])
        await dropSchema(schema)
      })
      return { store, holder }
    },
  ],
]

describe.each(leaseStores)('a task that died inside a sub-agent (%s store)', (_name, makeStores) => {
  test("while the sub-agent's lease is still held, `continue` and a message are 409 before anything starts; then `continue` works", async () => {
    const { store, holder } = makeStores()
    const delegate: HistoryEvent = {
      ...call,
      parts: [{ type: 'tool_call', id: 'p1', name: 'helper', argumentsJson: '{"prompt":"look it up"}' }],
    }
    const child = '0b7c4c3e-4444-4aaa-8bbb-0000000000c1'
    const childRecords: HistoryEvent[] = [
      { role: 'user', id: 'cu1', createdAt: at(2), parts: [{ type: 'text', text: 'look it up' }] },
    ]
    await store.create({ id: SESSION })
    await store.append(SESSION, [user, delegate])
    await store.create({
      id: child,
      parentSessionId: SESSION,
      subAgent: { name: 'helper', parentToolCallId: 'p1' },
    })
    await store.append(child, childRecords)
    // The dead process took the sub-agent's lease after its parent's: the parent's has expired, the
    // sub-agent's not yet (held here as that process would hold it).
    const held = await holder.acquire(child)
    const client = createClient({
      api: 'openai-chat',
      model: 'gpt-4o',
      apiKey: 'sk-test',
      baseUrl: model.url,
    })
    const helper = defineSubAgent({ name: 'helper', description: 'Looks things up', tools: [] })
    const app = await startApp({ store, client, tools: [helper] })
    cleanups.push(() => app.close())
    const requests = model.requests.length

    const carryOn = await fetch(`${app.url}/sessions/${SESSION}/continue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    })
    expect(carryOn.status).toBe(409)
    expect(((await carryOn.json()) as { error: string }).error).toBe(
      `sub-agent session ${child} is still held by another writer (its lease has not expired yet); try again later`,
    )
    const message = await fetch(`${app.url}/sessions/${SESSION}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'What happened?' }),
    })
    expect(message.status).toBe(409)
    await app.app.hub.idle(SESSION)
    expect(await store.read(SESSION)).toEqual([user, delegate])
    expect(await store.read(child)).toEqual(childRecords)
    expect(model.requests).toHaveLength(requests)

    // Once that lease is given back, `continue` carries the task on to its end.
    await held.release()
    model.enqueue(reply('r2', 'The lookup did not finish.'))
    const stream = `${app.url}/sessions/${SESSION}/events`
    // The sub-agent's task ends too (`error`: it was settled, not run); the parent's ends last.
    const own = (frames: Frame[]) =>
      events(frames).filter((e) => (e as { sessionId?: string }).sessionId === SESSION)
    const page = readStream(stream, (frames) => own(frames).some((e) => e.type === 'task_finish'))
    expect(
      (
        await fetch(`${app.url}/sessions/${SESSION}/continue`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(202)
    const got = own(await page)
    expect(got.at(-1)).toMatchObject({ type: 'task_finish', reason: 'completed' })
    expect(got.filter((e) => e.type === 'error')).toEqual([])
    expect((await store.read(child)).length).toBeGreaterThan(childRecords.length)
  })
})
