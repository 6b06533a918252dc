import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent } from '@kode/core'
import { createMemorySessionStore, loadSubSessions } from '@kode/session'
import { afterEach, expect, test } from 'vitest'
import { growingReplay } from '../src/server/record-feed.js'
import { type Frame, readStream, useApps } from './helpers.js'
import { startWriterModel, type WriterModel } from './writer-model.js'

// A page on this server following a session whose task runs elsewhere (another host on the same
// store; here another agent on a memory store, which follows like Postgres) while that task pauses
// inside a sub-agent for an approval.

const start = useApps()
const SESSION = '0b7c4c3e-5555-4aaa-8bbb-000000000001'
const models: WriterModel[] = []
afterEach(async () => {
  await Promise.all(models.splice(0).map((model) => model.server.close()))
})

test('a sub-agent another host paused shows whole, inside its call, as a page opened afterwards shows it', async () => {
  const model = await startWriterModel(join(mkdtempSync(join(tmpdir(), 'kode-web-notes-')), 'notes.md'))
  models.push(model)
  const { client, tools } = model
  const store = createMemorySessionStore()
  const b = await start({ client, tools, store })
  const shownOn = (frames: Frame[]) => {
    const from = frames.findLastIndex((f) => f.event === 'reset') + 1
    return frames
      .slice(from)
      .filter((f) => f.id !== undefined)
      .map((f) => f.data)
  }
  let expected: string[] | undefined
  // Read until the page shows the history's last record (its replay's last event).
  const page = readStream(`${b.url}/sessions/${SESSION}/events`, (frames) => {
    return expected !== undefined && shownOn(frames).at(-1) === expected.at(-1)
  })
  // Host A: its task asks the writer to save a note; the writer's call waits for approval.
  const a = createAgent({ client, store, tools, sessionId: SESSION })
  const run = a.run('save a note through the writer')
  for await (const _ of run) {
  }
  expect((await run.done).reason).toBe('awaiting_approval')
  await a.close()
  const history = await store.read(SESSION)
  const subSessions = await loadSubSessions(store, history)
  expected = growingReplay(history, SESSION, subSessions).map((event) => JSON.stringify(event))
  const writer = [...subSessions.keys()][0]!
  expect(subSessions.size).toBe(1)
  // Whatever came before (records come in bursts), the page shows what a page opened now gets.
  const frames = await page
  expect(shownOn(frames)).toEqual(expected)
  // And which call the writer belongs to, before its events.
  const links = frames.filter((f) => f.event === 'sub-agents').at(-1)
  expect(JSON.parse(links!.data)).toEqual({ [writer]: { sessionId: SESSION, toolCallId: 'call_0' } })
  const firstOfWriter = frames.findIndex((f) => f.id !== undefined && JSON.parse(f.data).sessionId === writer)
  expect(frames.indexOf(links!)).toBeLessThan(firstOfWriter)
})
