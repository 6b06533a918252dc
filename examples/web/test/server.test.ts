import { mkdtemp, readFile } from 'node:fs/promises'
import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMemorySessionStore } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { saveNoteTool } from '../src/note-tool.js'
import { eventually, type Frame, readStream, typeOf, useApps } from './helpers.js'
import { startWriterModel } from './writer-model.js'

// The HTTP contract of the example server, with the CLI's scripted model: "count" streams
// "1, 2, 3, " and then hangs until interrupted, so a test can act mid-task at a known point;
// any other prompt gets a short markdown answer.

const start = useApps()

const SESSION = '0b7c4c3e-1111-4aaa-8bbb-000000000001'
const post = (url: string, body?: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
/** `<status> <body>` of one request sent as given (a raw target, an agent to reuse a connection). */
function rawRequest(
  url: string,
  method: string,
  path: string,
  body?: string,
  agent?: Agent,
): Promise<string> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, method, path, agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => resolve(`${res.statusCode} ${text}`))
      },
    )
    req.on('error', reject)
    req.setTimeout(5_000, () => req.destroy(new Error(`no answer to ${method} ${path}`)))
    req.end(body)
  })
}
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
    const { url, app, store } = await start()
    expect((await post(`${url}/sessions/${SESSION}/messages`, { text: 'count' })).status).toBe(202)
    const busy = await post(`${url}/sessions/${SESSION}/messages`, { text: 'more' })
    expect(busy.status).toBe(409)
    expect(await busy.json()).toEqual({ error: 'a task is already running in this session' })
    await readStream(`${url}/sessions/${SESSION}/events`, has('assistant_text_delta'))
    expect((await post(`${url}/sessions/${SESSION}/interrupt`)).status).toBe(204)
    await app.hub.idle(SESSION)
    expect((await post(`${url}/sessions/${SESSION}/interrupt`)).status).toBe(409)
    const history = await app.hub.idle(SESSION).then(() => store.read(SESSION))
    expect(history.find((r) => 'role' in r && r.role === 'assistant')).toMatchObject({
      stopReason: 'aborted',
    })
  })

  test('bad input is a clear 4xx', async () => {
    const { url } = await start()
    expect((await post(`${url}/sessions/not%20an%20id/messages`, { text: 'x' })).status).toBe(400)
    expect((await post(`${url}/sessions/${SESSION}/messages`, { text: '' })).status).toBe(400)
    const json = { 'content-type': 'application/json' }
    const notJson = await fetch(`${url}/sessions/${SESSION}/messages`, {
      method: 'POST',
      headers: json,
      body: '{',
    })
    expect(notJson.status).toBe(400)
    const huge = await post(`${url}/sessions/${SESSION}/messages`, { text: 'x'.repeat(300_000) })
    expect(huge.status).toBe(413)
    expect((await fetch(`${url}/../etc/passwd`)).status).toBe(404)
    expect((await fetch(`${url}/app.js.map`)).status).toBe(404)
    expect((await fetch(`${url}/`, { method: 'DELETE' })).status).toBe(405)
    // A route of a session asked with the wrong method says so, and which one it takes.
    for (const [method, action, allow] of [
      ['GET', 'messages', 'POST'],
      ['PUT', 'approvals', 'POST'],
      ['GET', 'interrupt', 'POST'],
      ['DELETE', 'continue', 'POST'],
      ['POST', 'events', 'GET'],
    ] as const) {
      const wrong = await fetch(`${url}/sessions/${SESSION}/${action}`, { method, headers: json })
      expect(wrong.status, `${method} ${action}`).toBe(405)
      expect(wrong.headers.get('allow'), `${method} ${action}`).toBe(allow)
      expect(await wrong.json()).toEqual({ error: 'method not allowed' })
    }
    for (const action of ['nothing', 'constructor', '__proto__'])
      expect((await fetch(`${url}/sessions/${SESSION}/${action}`)).status, action).toBe(404)
  })

  test('a body may start with a byte order mark; one that is not UTF-8 is a 400', async () => {
    const { url, app } = await start()
    const json = { 'content-type': 'application/json' }
    const bom = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(JSON.stringify({ text: 'hello' })),
    ])
    const withBom = await fetch(`${url}/sessions/${SESSION}/messages`, {
      method: 'POST',
      headers: json,
      body: bom,
    })
    expect(withBom.status).toBe(202)
    await app.hub.idle(SESSION)
    // Invalid UTF-8 inside a string would otherwise reach the history as U+FFFD, silently changed.
    const latin1 = Buffer.from('{"text":"caf\xe9"}', 'latin1')
    const notUtf8 = await fetch(`${url}/sessions/${SESSION}/messages`, {
      method: 'POST',
      headers: json,
      body: latin1,
    })
    expect(notUtf8.status).toBe(400)
    expect(await notUtf8.json()).toEqual({ error: 'the body is not UTF-8' })
  })

  test('HEAD of a page answers as GET does, without the body', async () => {
    const { url } = await start()
    const get = await fetch(`${url}/`)
    const page = await get.arrayBuffer()
    const head = await fetch(`${url}/`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
    expect(head.headers.get('content-length')).toBe(String(page.byteLength))
    expect(await head.text()).toBe('')
    expect((await fetch(`${url}/nope.js`, { method: 'HEAD' })).status).toBe(404)
  })

  test('a request target that is not a path is a 400, not a server error', async () => {
    const { url } = await start()
    // An absolute-form target (as sent to a proxy) whose authority does not parse.
    expect(await rawRequest(url, 'GET', 'http://[zz/sessions')).toMatch(/^400 /)
  })

  test('after a 413 the connection still answers the next request', async () => {
    const { url } = await start()
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const body = JSON.stringify({ text: 'x'.repeat(2_000_000) })
      expect(await rawRequest(url, 'POST', `/sessions/${SESSION}/messages`, body, agent)).toMatch(/^413 /)
      expect(await rawRequest(url, 'GET', '/sessions', undefined, agent)).toMatch(/^200 /)
    } finally {
      agent.destroy()
    }
  })

  test('a body that trickles in slower than the deadline is a 408, and its connection is closed', async () => {
    const { url, store } = await start({ bodyTimeoutMs: 300 })
    const socket = connect(Number(new URL(url).port), '127.0.0.1')
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (answer += chunk))
    const closed = new Promise<boolean>((resolve) => socket.on('close', () => resolve(true)))
    // Headers announcing 100 bytes, then a byte now and then: a slow-loris body.
    socket.write(
      `POST /sessions/${SESSION}/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    )
    const drip = setInterval(() => socket.write(' '), 100)
    try {
      const ended = await Promise.race([closed, new Promise<false>((r) => setTimeout(() => r(false), 3_000))])
      expect(answer).toMatch(/^HTTP\/1\.1 408 /)
      expect(ended).toBe(true)
    } finally {
      clearInterval(drip)
      socket.destroy()
    }
    expect(await store.list()).toEqual([])
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

describe('POST /sessions/:id/approvals', () => {
  const finishes = (n: number) => (frames: Frame[]) =>
    frames.filter((f) => typeOf(f) === 'task_finish').length >= n
  const data = (frames: Frame[], type: string) =>
    frames.filter((f) => typeOf(f) === type).map((f) => JSON.parse(f.data))

  /** A server whose scripted model calls `save_note` (which needs approval) when asked for a note. */
  const startWithNotes = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kode-web-notes-'))
    const file = join(dir, 'notes.md')
    const app = await start({ tools: [saveNoteTool(file)] })
    return { ...app, file, events: `${app.url}/sessions/${SESSION}/events` }
  }

  /** Asks for a note and waits until the task ends awaiting approval; returns the pending call id. */
  const askForNote = async ({ url, app, events }: Awaited<ReturnType<typeof startWithNotes>>) => {
    expect(
      (await post(`${url}/sessions/${SESSION}/messages`, { text: 'save a note: buy milk' })).status,
    ).toBe(202)
    await app.hub.idle(SESSION)
    const frames = await readStream(events, finishes(1))
    expect(data(frames, 'task_finish').at(-1)).toMatchObject({ reason: 'awaiting_approval' })
    const [request] = data(frames, 'tool_approval_request')
    expect(request).toMatchObject({ toolName: 'save_note', arguments: '{"text":"save a note: buy milk"}' })
    return request.toolCallId as string
  }

  test('an approval continues the task on the same stream: the tool runs once and the model reads its result', async () => {
    const server = await startWithNotes()
    const { url, app, events, file, store } = server
    const toolCallId = await askForNote(server)
    // A reader connected across the continuation sees the continued task follow on, new ids only.
    // The backlog is sent as the reader subscribes, so its first frame means it is subscribed.
    let connected = false
    const whole = readStream(events, (frames) => {
      connected = true
      return finishes(2)(frames)
    })
    await eventually(() => connected)
    const response = await post(`${url}/sessions/${SESSION}/approvals`, {
      approvals: [{ toolCallId, approved: true }],
    })
    expect(response.status).toBe(202)
    const frames = await whole
    expect(new Set(frames.map((f) => f.id)).size).toBe(frames.length)
    const firstFinish = frames.findIndex((f) => typeOf(f) === 'task_finish')
    const continued = frames.slice(firstFinish + 1)
    expect(continued.map(typeOf)).toEqual(
      expect.arrayContaining(['task_start', 'tool_approval_decision', 'tool_result']),
    )
    expect(data(continued, 'tool_approval_decision')).toEqual([
      expect.objectContaining({ toolCallId, toolName: 'save_note', approved: true }),
    ])
    expect(data(continued, 'tool_result')).toEqual([
      expect.objectContaining({ toolCallId, status: 'success' }),
    ])
    expect(data(continued, 'task_finish')).toEqual([expect.objectContaining({ reason: 'completed' })])
    expect(await readFile(file, 'utf8')).toBe('- save a note: buy milk\n')

    await app.hub.idle(SESSION)
    const history = await store.read(SESSION)
    expect(history).toContainEqual(
      expect.objectContaining({ type: 'approval_decision', toolCallId, approved: true }),
    )
    expect(history).toContainEqual(expect.objectContaining({ role: 'tool', toolCallId, status: 'success' }))
    const answer = history.filter((r) => 'role' in r && r.role === 'assistant').at(-1)
    expect(JSON.stringify(answer)).toContain(`The note tool answered: saved the note to ${file}`)
    // Decided already: a second decision is refused and nothing runs again.
    const again = await post(`${url}/sessions/${SESSION}/approvals`, {
      approvals: [{ toolCallId, approved: true }],
    })
    expect(again.status).toBe(409)
    expect(await readFile(file, 'utf8')).toBe('- save a note: buy milk\n')
  })

  test('a decision may name the session its call waits in, which tells apart calls sharing an id', async () => {
    const server = await startWithNotes()
    const { url, app, file } = server
    const toolCallId = await askForNote(server)
    // The call waits in this session, not in a sub-agent's: a decision for another one is refused.
    const elsewhere = await post(`${url}/sessions/${SESSION}/approvals`, {
      approvals: [{ toolCallId, approved: true, sessionId: 'a-sub-agent' }],
    })
    expect(elsewhere.status).toBe(409)
    const response = await post(`${url}/sessions/${SESSION}/approvals`, {
      approvals: [{ toolCallId, approved: true, sessionId: SESSION }],
    })
    expect(response.status).toBe(202)
    await app.hub.idle(SESSION)
    expect(await readFile(file, 'utf8')).toBe('- save a note: buy milk\n')
  })

  test('a denial gives the model "denied by the user" with the reason, and the tool never runs', async () => {
    const server = await startWithNotes()
    const { url, app, events, file, store } = server
    const toolCallId = await askForNote(server)
    const response = await post(`${url}/sessions/${SESSION}/approvals`, {
      approvals: [{ toolCallId, approved: false, reason: 'not today' }],
    })
    expect(response.status).toBe(202)
    await app.hub.idle(SESSION)
    const frames = await readStream(events, finishes(1))
    expect(data(frames, 'tool_result')).toEqual([
      expect.objectContaining({ toolCallId, status: 'error', result: 'denied by the user: not today' }),
    ])
    expect(data(frames, 'task_finish')).toEqual([expect.objectContaining({ reason: 'completed' })])
    const history = await store.read(SESSION)
    expect(history).toContainEqual(
      expect.objectContaining({
        type: 'approval_decision',
        toolCallId,
        approved: false,
        reason: 'not today',
      }),
    )
    const answer = history.filter((r) => 'role' in r && r.role === 'assistant').at(-1)
    expect(JSON.stringify(answer)).toContain('The note tool answered: denied by the user: not today')
    await expect(readFile(file, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' })
  })

  test('a malformed body is 400; decisions that do not fit, or a running task, are 409', async () => {
    const server = await startWithNotes()
    const { url } = server
    const approvals = `${url}/sessions/${SESSION}/approvals`
    for (const body of [
      {},
      { approvals: [] },
      { approvals: [{ toolCallId: 'x' }] },
      { approvals: [{ toolCallId: 1, approved: true }] },
      { approvals: [{ toolCallId: 'x', approved: 'yes' }] },
      { approvals: [{ toolCallId: 'x', approved: false, reason: 3 }] },
      { approvals: [{ toolCallId: 'x', approved: true, sessionId: 3 }] },
    ]) {
      const response = await post(approvals, body)
      expect(response.status, JSON.stringify(body)).toBe(400)
    }
    const json = { 'content-type': 'application/json' }
    expect((await fetch(approvals, { method: 'POST', headers: json, body: '{' })).status).toBe(400)
    // Nothing awaits approval in a fresh session.
    const nothing = await post(approvals, { approvals: [{ toolCallId: 'x', approved: true }] })
    expect(nothing.status).toBe(409)
    expect(((await nothing.json()) as { error: string }).error).toMatch(/do not fit what awaits approval/)
    // Nor is there a task to carry on.
    const carryOn = await fetch(`${url}/sessions/${SESSION}/continue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    })
    expect(carryOn.status).toBe(409)
    expect(((await carryOn.json()) as { error: string }).error).toMatch(/^nothing to carry on: /)

    const toolCallId = await askForNote(server)
    const unknown = await post(approvals, { approvals: [{ toolCallId: 'not-pending', approved: true }] })
    expect(unknown.status).toBe(409)
    // While a task runs.
    const other = '0b7c4c3e-1111-4aaa-8bbb-000000000003'
    expect((await post(`${url}/sessions/${other}/messages`, { text: 'count' })).status).toBe(202)
    const busy = await post(`${url}/sessions/${other}/approvals`, {
      approvals: [{ toolCallId, approved: true }],
    })
    expect(busy.status).toBe(409)
    expect(await busy.json()).toEqual({ error: 'a task is already running in this session' })
    // The refused requests changed nothing: the pending call can still be decided.
    expect((await post(approvals, { approvals: [{ toolCallId, approved: false }] })).status).toBe(202)
  })

  test("a sub-agent's session takes no message, decision or continue of its own: its parent's task drives it", async () => {
    const notes = join(await mkdtemp(join(tmpdir(), 'kode-web-notes-')), 'notes.md')
    const model = await startWriterModel(notes)
    try {
      const { url, app, store } = await start({ client: model.client, tools: model.tools })
      const text = 'save a note through the writer'
      expect((await post(`${url}/sessions/${SESSION}/messages`, { text })).status).toBe(202)
      await app.hub.idle(SESSION)
      const [writer, ...others] = (await store.list()).filter((info) => info.subAgent !== undefined)
      expect(others).toEqual([])
      const paused = await store.read(writer!.id)
      // Its id is on the stream; a message there would run a task of its own in it, and settle
      // (deny) the call its parent waits on.
      const refusal = {
        error: `session ${writer!.id} is a sub-agent's session: the task of its parent session ${SESSION} drives it; send messages and decisions there`,
      }
      const decision = { approvals: [{ toolCallId: 'call_0', approved: true }] }
      for (const [action, body] of [
        ['messages', { text: 'hello writer' }],
        ['approvals', decision],
        ['continue', undefined],
      ] as const) {
        const response = await post(`${url}/sessions/${writer!.id}/${action}`, body)
        expect(response.status, action).toBe(409)
        expect(await response.json(), action).toEqual(refusal)
      }
      expect(await store.read(writer!.id)).toEqual(paused)
      expect(model.server.requests.length).toBe(2)
      // Decided on the main session, as the page does, the writer's call runs.
      const approvals = { approvals: [{ toolCallId: 'call_0', sessionId: writer!.id, approved: true }] }
      expect((await post(`${url}/sessions/${SESSION}/approvals`, approvals)).status).toBe(202)
      await app.hub.idle(SESSION)
      expect(await readFile(notes, 'utf8')).toBe('- from the writer\n')
    } finally {
      await model.server.close()
    }
  })
})

describe('sessions in memory', () => {
  const RELEASE_MS = 100
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  test('a session is released once its last reader left and no task runs, and reloads from the store', async () => {
    const { url, app } = await start({ releaseAfterMs: RELEASE_MS })
    const events = `${url}/sessions/${SESSION}/events`
    // Two readers, one of which stays after the other left.
    const stay = new AbortController()
    const staying = await fetch(events, { signal: stay.signal })
    expect(staying.status).toBe(200)
    expect((await post(`${url}/sessions/${SESSION}/messages`, { text: 'hello' })).status).toBe(202)
    await app.hub.idle(SESSION)
    // The task's log, as it streamed.
    const live = await readStream(events, has('task_finish'))
    await wait(RELEASE_MS * 3)
    expect(app.hub.holds(SESSION)).toBe(true)
    // The last reader leaves: the idle session goes.
    stay.abort()
    await eventually(() => !app.hub.holds(SESSION))

    // Opened again, it is the replay of its history.
    const replay = await readStream(events, has('response_complete'))
    expect(replay.map(typeOf)).toContain('user_message')
    expect(JSON.parse(replay.at(-1)!.data).content).toBe(
      live
        .filter((f) => typeOf(f) === 'assistant_text_delta')
        .map((f) => JSON.parse(f.data).content)
        .join(''),
    )
    await eventually(() => !app.hub.holds(SESSION))
  })

  test('a session whose task runs with no reader is kept until the task ended', async () => {
    const { url, app } = await start({ releaseAfterMs: RELEASE_MS })
    expect((await post(`${url}/sessions/${SESSION}/messages`, { text: 'count' })).status).toBe(202)
    await wait(RELEASE_MS * 3)
    expect(app.hub.holds(SESSION)).toBe(true)
    expect((await post(`${url}/sessions/${SESSION}/interrupt`)).status).toBe(204)
    await eventually(() => !app.hub.holds(SESSION))
  })

  test('a reader back within the delay resumes without a reset; sessions only looked at are not kept', async () => {
    const { url, app } = await start({ releaseAfterMs: 2_000 })
    const events = `${url}/sessions/${SESSION}/events`
    await post(`${url}/sessions/${SESSION}/messages`, { text: 'hello' })
    await app.hub.idle(SESSION)
    const reference = await readStream(events, has('task_finish'))
    const rest = await readStream(events, count(reference.length - 6), reference[5]!.id)
    expect(rest).toEqual(reference.slice(6))

    const quick = await start({ releaseAfterMs: RELEASE_MS })
    const ids = Array.from({ length: 20 }, (_, i) => `0b7c4c3e-2222-4aaa-8bbb-${String(i).padStart(12, '0')}`)
    for (const id of ids) {
      // A page opened on a session that has no records yet, then closed.
      const opened = new AbortController()
      const response = await fetch(`${quick.url}/sessions/${id}/events`, { signal: opened.signal })
      expect(response.status).toBe(200)
      await eventually(() => quick.app.hub.holds(id))
      opened.abort()
    }
    // Interrupting a session the hub does not hold loads nothing.
    expect((await post(`${quick.url}/sessions/${SESSION}/interrupt`)).status).toBe(409)
    await eventually(() => [SESSION, ...ids].every((id) => !quick.app.hub.holds(id)))
  })
})
