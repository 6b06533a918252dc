import { createMemorySessionStore } from '@kode/session'
import { afterEach, describe, expect, test } from 'vitest'
import { eventually, type Frame, type Running, readStream, startApp, typeOf } from './helpers.js'

// The HTTP contract of the example server, with the CLI's scripted model: "count" streams
// "1, 2, 3, " and then hangs until interrupted, so a test can act mid-task at a known point;
// any other prompt gets a short markdown answer.

let running: Running[] = []
afterEach(async () => {
  await Promise.all(running.map((r) => r.close()))
  running = []
})
const start = async (...args: Parameters<typeof startApp>) => {
  const app = await startApp(...args)
  running.push(app)
  return app
}

const SESSION = '0b7c4c3e-1111-4aaa-8bbb-000000000001'
const post = (url: string, body?: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
const has = (type: string) => (frames: Frame[]) => frames.some((f) => f.id && typeOf(f) === type)
const count = (n: number) => (frames: Frame[]) => frames.length >= n

describe('GET /sessions/:id/events', () => {
  test('every event carries an id, and a reconnect with Last-Event-ID mid-task gets exactly what it missed', async () => {
    const { url } = await start()
    const events = `${url}/sessions/${SESSION}/events`
    // A reader that stays connected the whole time: the reference of what was sent.
    const whole = readStream(events, has('task_finish'))
    await eventually(
      async () => (await post(`${url}/sessions/${SESSION}/messages`, { text: 'count' })).status === 202,
    )
    // A second reader drops after the first text delta ...
    const first = await readStream(events, has('assistant_text_delta'))
    // ... and comes back with the last id it saw, still mid-task (the model hangs after "1, 2, 3, ").
    const second = readStream(events, has('task_finish'), first.at(-1)!.id)
    await eventually(async () => (await post(`${url}/sessions/${SESSION}/interrupt`)).status === 204)
    const reference = await whole
    expect(reference.every((f) => f.id !== undefined && f.event === undefined)).toBe(true)
    expect(new Set(reference.map((f) => f.id)).size).toBe(reference.length)
    expect([...first, ...(await second)]).toEqual(reference)
    expect(reference.map(typeOf)).toContain('interrupt')
  })

  test('a reconnect after the task ended gets the rest, and one with the last id gets nothing', async () => {
    const { url, app } = await start()
    const events = `${url}/sessions/${SESSION}/events`
    expect((await post(`${url}/sessions/${SESSION}/messages`, { text: 'hello' })).status).toBe(202)
    await app.hub.idle(SESSION)
    const reference = await readStream(events, has('task_finish'))
    for (const cut of [0, 5, reference.length - 2]) {
      const rest = await readStream(events, count(reference.length - cut - 1), reference[cut]!.id)
      expect(rest).toEqual(reference.slice(cut + 1))
    }
    // The same through the query, for clients that cannot set headers.
    const query = await readStream(`${events}?lastEventId=${reference[5]!.id}`, count(reference.length - 6))
    expect(query).toEqual(reference.slice(6))
    // Caught up: only keep-alives would follow; the stream sends no event within a short read.
    const none = await Promise.race([
      readStream(events, count(1), reference.at(-1)!.id),
      new Promise<Frame[]>((resolve) => setTimeout(() => resolve([]), 300)),
    ])
    expect(none).toEqual([])
  })

  test('an id the server cannot place gets a reset, then the whole stream', async () => {
    const { url, app } = await start()
    const events = `${url}/sessions/${SESSION}/events`
    await post(`${url}/sessions/${SESSION}/messages`, { text: 'hello' })
    await app.hub.idle(SESSION)
    const reference = await readStream(events, has('task_finish'))
    for (const id of ['deadbeef-3', 'garbage', `${reference[0]!.id!.split('-')[0]}-99999`]) {
      const frames = await readStream(events, count(reference.length + 1), id)
      expect(frames[0]).toEqual({ event: 'reset', data: '{"reason":"unknown Last-Event-ID"}' })
      expect(frames.slice(1)).toEqual(reference)
    }
  })

  test('a session the server does not hold is replayed from the store, then the live tail follows', async () => {
    const store = createMemorySessionStore()
    const before = await start({ store })
    await post(`${before.url}/sessions/${SESSION}/messages`, { text: 'hello' })
    await before.app.hub.idle(SESSION)
    const live = await readStream(`${before.url}/sessions/${SESSION}/events`, has('task_finish'))
    await before.close()
    running = running.filter((r) => r !== before)

    // "Restarted": a new server on the same store.
    const after = await start({ store })
    const events = `${after.url}/sessions/${SESSION}/events`
    const replay = await readStream(events, has('response_complete'))
    // Streamed text that is persisted arrives as its final message: the response's whole text.
    const streamed = live
      .filter((f) => typeOf(f) === 'assistant_text_delta')
      .map((f) => JSON.parse(f.data).content)
      .join('')
    expect(replay.map(typeOf)).not.toContain('assistant_text_delta')
    expect(JSON.parse(replay.at(-1)!.data).content).toBe(streamed)
    expect(replay.map(typeOf)).toContain('user_message')

    // The live tail: a second task's events follow the replay on the same connection.
    const tail = readStream(events, (frames) => frames.filter((f) => typeOf(f) === 'task_finish').length >= 1)
    await eventually(
      async () => (await post(`${after.url}/sessions/${SESSION}/messages`, { text: 'again' })).status === 202,
    )
    const frames = await tail
    expect(frames.map(typeOf).slice(-1)).toEqual(['task_finish'])
    expect(frames.some((f) => typeOf(f) === 'user_message' && JSON.parse(f.data).content === 'again')).toBe(
      true,
    )
  })
})

describe('tasks over HTTP', () => {
  test('a second message while a task runs is refused with 409, and interrupt ends the task', async () => {
    const { url, app } = await start()
    expect((await post(`${url}/sessions/${SESSION}/messages`, { text: 'count' })).status).toBe(202)
    const busy = await post(`${url}/sessions/${SESSION}/messages`, { text: 'more' })
    expect(busy.status).toBe(409)
    expect(await busy.json()).toEqual({ error: 'a task is already running in this session' })
    await readStream(`${url}/sessions/${SESSION}/events`, has('assistant_text_delta'))
    expect((await post(`${url}/sessions/${SESSION}/interrupt`)).status).toBe(204)
    await app.hub.idle(SESSION)
    expect((await post(`${url}/sessions/${SESSION}/interrupt`)).status).toBe(409)
    const history = await app.hub.idle(SESSION).then(() => running[0]!.store.read(SESSION))
    expect(history.find((r) => 'role' in r && r.role === 'assistant')).toMatchObject({
      stopReason: 'aborted',
    })
  })

  test('bad input is a clear 4xx', async () => {
    const { url } = await start()
    expect((await post(`${url}/sessions/not%20an%20id/messages`, { text: 'x' })).status).toBe(400)
    expect((await post(`${url}/sessions/${SESSION}/messages`, { text: '' })).status).toBe(400)
    const notJson = await fetch(`${url}/sessions/${SESSION}/messages`, { method: 'POST', body: '{' })
    expect(notJson.status).toBe(400)
    const huge = await post(`${url}/sessions/${SESSION}/messages`, { text: 'x'.repeat(300_000) })
    expect(huge.status).toBe(413)
    expect((await fetch(`${url}/../etc/passwd`)).status).toBe(404)
    expect((await fetch(`${url}/app.js.map`)).status).toBe(404)
  })

  test('the session list holds top-level sessions with their titles, newest first', async () => {
    const { url, app } = await start()
    const other = '0b7c4c3e-1111-4aaa-8bbb-000000000002'
    for (const [id, text] of [
      [SESSION, 'first question'],
      [other, 'second question'],
    ] as const) {
      await post(`${url}/sessions/${id}/messages`, { text })
      await app.hub.idle(id)
    }
    const { sessions } = (await (await fetch(`${url}/sessions`)).json()) as {
      sessions: { id: string; title: string }[]
    }
    expect(sessions.map((s) => [s.id, s.title])).toEqual([
      [other, 'second question'],
      [SESSION, 'first question'],
    ])
  })
})
