import { type ChildProcess, spawn } from 'node:child_process'
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { checkEventOrder } from '@kode/protocol'
import { createClient } from '@kode/providers'
import { createSseTestServer, type SseTestServer } from '@kode/providers/testing'
import { deriveReplayEvents } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { createPostgresSessionStore } from '@kode/session-postgres'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { bundleForNode } from '../../../test/children/bundle-for-node.js'
import { callTools, reply } from '../../../test/model/replies.js'
import { dropSchema, freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'
import { growingReplay } from '../src/server/record-feed.js'
import { crashTools } from './crash-tools.js'
import { eventually, type Frame, readStream, startApp, typeOf } from './helpers.js'

// Host A, a worker process on the shared Postgres, runs a task and is killed with SIGKILL while
// two of its tool calls run. A page on host B (the example app in this process) watches the whole
// time; once A's lease expired, B is asked to carry the task on (`POST /sessions/:id/continue`).

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

const SESSION = '0b7c4c3e-3333-4aaa-8bbb-000000000003'
const STOPPED =
  'The task stopped before this tool call finished (its process ended); it may or may not have run.'

let worker: string
let model: SseTestServer
let dir: string
const schema = freshSchema()
const children: ChildProcess[] = []

beforeAll(async () => {
  worker = await bundleForNode(resolve(import.meta.dirname, 'processes/crash-worker.ts'), {
    external: ['pg'],
    packageDir: resolve(import.meta.dirname, '..'),
  })
  model = await createSseTestServer()
  dir = mkdtempSync(join(tmpdir(), 'kode-web-crash-'))
}, 60_000)

afterAll(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
  await model.close()
  rmSync(resolve(worker, '..'), { recursive: true, force: true })
  rmSync(dir, { recursive: true, force: true })
  await dropSchema(schema)
})

/** The events of this scenario a replay does not derive: task boundaries, deltas, budgets. */
const LIVE_ONLY = new Set([
  'task_start',
  'tool_execution_start',
  'context_usage',
  'assistant_text_start',
  'assistant_text_delta',
  'assistant_text_end',
  'task_finish',
])

const toolLog = () => join(dir, 'tools.log')
const toolRuns = () => (existsSync(toolLog()) ? readFileSync(toolLog(), 'utf8').trim().split('\n') : [])
const events = (frames: Frame[]) => frames.filter((f) => f.id !== undefined).map((f) => JSON.parse(f.data))
const finished = (frames: Frame[]) => frames.some((f) => f.id !== undefined && typeOf(f) === 'task_finish')

describe('a task whose host is killed during a tool call, watched from another host', () => {
  test('B carries it on and its page sees one exact stream, nothing repeated', async () => {
    model.enqueue(callTools('r1', [{ id: 'l1', name: 'lookup', args: {} }]))
    model.enqueue(
      callTools('r2', [
        { id: 'c1', name: 'charge', args: {} },
        { id: 'n1', name: 'notify', args: {} },
      ]),
    )
    model.enqueue(reply('r3', 'Paid; the customer may not have been told.'))

    const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema, leaseMs: 1_000 })
    const client = createClient({
      api: 'openai-chat',
      model: 'gpt-4o',
      apiKey: 'sk-test',
      baseUrl: model.url,
    })
    const b = await startApp({
      store,
      client,
      tools: crashTools({ host: 'b', log: (line) => appendFileSync(toolLog(), `${line}\n`) }),
    })
    try {
      const stream = `${b.url}/sessions/${SESSION}/events`
      // The page on B is there before the session exists, and stays until the task finished.
      let seen: Frame[] = []
      const page = readStream(stream, (frames) => {
        seen = frames
        return finished(frames)
      })

      // Host A runs the task; kill it while charge and notify run.
      const a = spawn(
        process.execPath,
        [
          worker,
          JSON.stringify({
            postgresUrl: postgresUrl(),
            schema,
            sessionId: SESSION,
            modelUrl: model.url,
            toolLog: toolLog(),
            leaseMs: 1_000,
          }),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      )
      children.push(a)
      const exited = new Promise((resolve) => a.on('exit', resolve))
      const running = new Set<string>()
      for await (const line of createInterface({ input: a.stdout! })) {
        running.add(line.slice('running '.length))
        if (running.has('c1') && running.has('n1')) break
      }
      // B's page shows A's committed records: the lookup and its result, the call of both tools.
      await eventually(() => events(seen).filter((e) => e.type === 'tool_call').length === 3)
      // While A lives it holds the session: B refuses to carry the task on.
      const early = await fetch(`${b.url}/sessions/${SESSION}/continue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      })
      expect(early.status).toBe(409)
      expect(await early.json()).toEqual({ error: 'a task is already running in this session' })
      a.kill('SIGKILL')
      await exited
      const beforeCrash = seen.slice()

      // B is asked to carry the task on: 409 until A's lease expired, then 202.
      await eventually(async () => {
        const response = await fetch(`${b.url}/sessions/${SESSION}/continue`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
        })
        if (response.status === 409) return false
        expect(response.status).toBe(202)
        return true
      })
      const frames = await page

      // One coherent stream: no reset, every id once, what was shown before the crash its prefix.
      expect(frames.every((f) => f.event === undefined)).toBe(true)
      expect(new Set(frames.map((f) => f.id)).size).toBe(frames.length)
      expect(frames.slice(0, beforeCrash.length)).toEqual(beforeCrash)
      const got = events(frames)
      // What B showed before the crash is the replay of what A committed, each event once.
      const history = await store.read(SESSION)
      expect(events(beforeCrash)).toEqual(
        JSON.parse(JSON.stringify(growingReplay(history.slice(0, 4), SESSION))),
      )
      // Every call settled once: lookup by A; charge run again by B (rerun); notify answered as
      // interrupted (its onResume is 'error'). B's task carries on the turn A left open: it
      // answers the calls the page already shows, announcing none again, so the stream stays one
      // valid sequence of events.
      expect(
        got.filter((e) => e.type === 'tool_result').map((e) => [e.toolCallId, e.status, e.result]),
      ).toEqual([
        ['l1', 'success', 'invoice 42: 500 cents'],
        ['c1', 'success', 'charged 500 cents'],
        ['n1', 'error', STOPPED],
      ])
      expect(got.filter((e) => e.type === 'tool_call').map((e) => e.toolCallId)).toEqual(['l1', 'c1', 'n1'])
      expect(checkEventOrder(got)).toEqual([])
      expect(got.filter((e) => e.type === 'response_complete').map((e) => e.responseId)).toEqual([
        'r1',
        'r2',
        'r3',
      ])
      expect(got.at(-1)).toMatchObject({ type: 'task_finish' })

      // Each model response was asked for once: A made r1 and r2, B only r3.
      expect(model.requests.length).toBe(3)
      const toolMessages = (model.requests[2]!.body as { messages: { role: string }[] }).messages.filter(
        (m) => m.role === 'tool',
      )
      expect(toolMessages).toEqual([
        { role: 'tool', tool_call_id: 'l1', content: 'invoice 42: 500 cents' },
        { role: 'tool', tool_call_id: 'c1', content: 'charged 500 cents' },
        { role: 'tool', tool_call_id: 'n1', content: STOPPED },
      ])
      // lookup ran once; charge again on B with the same call id (rerun); notify not again.
      expect(toolRuns()).toEqual([
        'lookup l1 resumed=false a',
        expect.stringMatching(/^(charge c1|notify n1) resumed=false a$/),
        expect.stringMatching(/^(charge c1|notify n1) resumed=false a$/),
        'charge c1 resumed=true b',
      ])
      await b.app.hub.idle(SESSION)
      const final = await store.read(SESSION)
      const ids = final.map((r) => r.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect(final).toHaveLength(8)

      // A page opened on B now sees the same events as the one that watched through the crash.
      const fresh = await readStream(stream, finished)
      expect(events(fresh)).toEqual(got)
      // A reconnect to B after the crash resumes exactly from any event of B's log; an id from
      // before B's task (the log it replaced) gets a reset, then the whole log.
      const cut = frames.length - 5
      expect(await readStream(stream, finished, frames[cut - 1]!.id)).toEqual(frames.slice(cut))
      expect(await readStream(stream, finished, fresh[3]!.id)).toEqual(fresh.slice(4))
      const reset = await readStream(stream, finished, beforeCrash.at(-1)!.id)
      expect(reset[0]).toMatchObject({ event: 'reset' })
      expect(reset.slice(1)).toEqual(fresh)
    } finally {
      await b.close()
      await store.close()
    }
  })
})

describe('a task whose process is killed during a tool call, on the file store', () => {
  test('a page reading the crashed session, then its continuation, sees the replay of the final history once', async () => {
    const SID = '0b7c4c3e-3333-4aaa-8bbb-000000000004'
    rmSync(toolLog(), { force: true })
    model.enqueue(callTools('r1', [{ id: 'l1', name: 'lookup', args: {} }]))
    model.enqueue(
      callTools('r2', [
        { id: 'c1', name: 'charge', args: {} },
        { id: 'n1', name: 'notify', args: {} },
      ]),
    )
    model.enqueue(reply('r3', 'Paid; the customer may not have been told.'))
    const fileDir = join(dir, 'sessions')
    const a = spawn(
      process.execPath,
      [
        worker,
        JSON.stringify({
          fileDir,
          postgresUrl: '',
          schema,
          sessionId: SID,
          modelUrl: model.url,
          toolLog: toolLog(),
          leaseMs: 1_000,
        }),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    children.push(a)
    const exited = new Promise((resolve) => a.on('exit', resolve))
    const running = new Set<string>()
    for await (const line of createInterface({ input: a.stdout! })) {
      running.add(line.slice('running '.length))
      if (running.has('c1') && running.has('n1')) break
    }
    a.kill('SIGKILL')
    await exited

    const store = createFileSessionStore({ dir: fileDir })
    const client = createClient({
      api: 'openai-chat',
      model: 'gpt-4o',
      apiKey: 'sk-test',
      baseUrl: model.url,
    })
    const b = await startApp({
      store,
      client,
      tools: crashTools({ host: 'b', log: (line) => appendFileSync(toolLog(), `${line}\n`) }),
    })
    try {
      const stream = `${b.url}/sessions/${SID}/events`
      const before = await store.read(SID)
      // A page opens the crashed session on B (a server restarted after the crash, say): the turn
      // the dead process left open is shown open, its calls without results.
      let seen: Frame[] = []
      const page = readStream(stream, (frames) => {
        seen = frames
        return finished(frames)
      })
      await eventually(() => events(seen).filter((e) => e.type === 'tool_call').length === 3)
      const shown = seen.slice()
      expect(events(shown).map((e) => e.type)).toEqual([
        'user_message',
        'turn_start',
        'response_complete',
        'usage',
        'tool_call',
        'tool_result',
        'turn_end',
        'turn_start',
        'response_complete',
        'usage',
        'tool_call',
        'tool_call',
      ])
      const response = await fetch(`${b.url}/sessions/${SID}/continue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      })
      expect(response.status).toBe(202)
      const frames = await page
      await b.app.hub.idle(SID)
      const final = await store.read(SID)

      // No reset: what the page showed is the prefix of what it got; each id once.
      expect(frames.every((f) => f.event === undefined)).toBe(true)
      expect(new Set(frames.map((f) => f.id)).size).toBe(frames.length)
      expect(frames.slice(0, shown.length)).toEqual(shown)
      const got = events(frames)
      expect(checkEventOrder(got)).toEqual([])
      // The carried-on turn: the results, one `turn_end`; then the next turn and the task's end.
      expect(got.slice(shown.length).map((e) => e.type)).toEqual([
        'task_start',
        'tool_result',
        'tool_result',
        'turn_end',
        'turn_start',
        'context_usage',
        'assistant_text_start',
        ...Array(8).fill('assistant_text_delta'),
        'assistant_text_end',
        'response_complete',
        'usage',
        'context_usage',
        'turn_end',
        'task_metadata',
        'task_finish',
      ])
      expect(got.filter((e) => e.type === 'turn_end')).toHaveLength(3)
      expect(got.filter((e) => e.type === 'tool_call').map((e) => e.toolCallId)).toEqual(['l1', 'c1', 'n1'])
      // Together: the events of the replay of the final history, each once. (Live events carry the
      // time they were sent, replayed ones that of their record; a live turn announces its calls
      // before their results, the replay puts each call right before its result.)
      const untimed = (list: unknown[]) =>
        list.map((e) => JSON.stringify({ ...(e as object), timestamp: 0 })).sort()
      const replayedPart = got.filter((e) => !LIVE_ONLY.has(e.type))
      expect(untimed(replayedPart)).toEqual(untimed(deriveReplayEvents(final, { sessionId: SID })))
      expect(before).toHaveLength(4)
      // charge ran again on B with the same call id (rerun); notify not again.
      expect(toolRuns()).toEqual([
        'lookup l1 resumed=false a',
        expect.stringMatching(/^(charge c1|notify n1) resumed=false a$/),
        expect.stringMatching(/^(charge c1|notify n1) resumed=false a$/),
        'charge c1 resumed=true b',
      ])

      // A page opened now sees the same events; a reconnect from before the task gets a reset.
      const fresh = await readStream(stream, finished)
      expect(events(fresh)).toEqual(got)
      const reset = await readStream(stream, finished, shown.at(-1)!.id)
      expect(reset[0]).toMatchObject({ event: 'reset' })
      expect(reset.slice(1)).toEqual(fresh)
    } finally {
      await b.close()
    }
  })
})
