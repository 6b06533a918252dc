import { connect } from 'node:net'
import { createClient } from '@kode/providers'
import { createSseTestServer, type SseTestServer, scriptedResponse } from '@kode/providers/testing'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type Frame, readStream, typeOf, useApps } from './helpers.js'

// A reader that stops reading (a stalled network, a hostile client) must not make the server
// hold every event for it: once too much waits for it, it is dropped, and it resumes exactly with
// Last-Event-ID, as after any dropped connection.

let model: SseTestServer
beforeAll(async () => {
  model = await createSseTestServer()
})
afterAll(() => model.close())
const start = useApps()

/** Frames of raw SSE bytes, up to the last complete one. */
function parseFrames(raw: string): Frame[] {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4)
  return body
    .split('\n\n')
    .slice(0, -1)
    .flatMap((block) => {
      const frame: Frame = { data: '' }
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':')
        const value = line.slice(colon + 1).replace(/^ /, '')
        if (line.startsWith('id:')) frame.id = value
        else if (line.startsWith('data:')) frame.data = value
      }
      return frame.id === undefined ? [] : [frame]
    })
}

test('a reader that stops reading is dropped once too much waits for it, and resumes exactly', async () => {
  // About 16 MB of events (the model's text in 64 kB words, then the whole text again): more
  // than the kernel's socket buffers and the 1 MiB that may wait for a reader.
  const text = Array.from({ length: 128 }, (_, i) => `${i}${'x'.repeat(64 * 1024)}`).join(' ')
  model.enqueue(scriptedResponse('openai-chat', { steps: [{ text }] }))
  const client = createClient({ api: 'openai-chat', model: 'm', apiKey: 'sk-test', baseUrl: model.url })
  const app = await start({ client, maxBufferedBytes: 1024 * 1024 })
  const { port } = new URL(app.url)
  const stream = `${app.url}/sessions/slow/events`

  // A reader that connects and then reads nothing while the task runs.
  const socket = connect(Number(port), '127.0.0.1')
  socket.write('GET /sessions/slow/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  socket.pause()
  const chunks: Buffer[] = []
  const ended = new Promise<boolean>((resolve) => {
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('close', () => resolve(true))
    socket.on('error', () => {})
  })
  await new Promise((resolve) => setTimeout(resolve, 200))
  const posted = await fetch(`${app.url}/sessions/slow/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'write a lot' }),
  })
  expect(posted.status).toBe(202)
  await app.app.hub.idle('slow')

  // It reads again: it gets what the kernel held for it, and the server has closed the stream.
  socket.resume()
  const closed = await Promise.race([ended, new Promise<false>((r) => setTimeout(() => r(false), 5_000))])
  socket.destroy()
  expect(closed).toBe(true)
  const received = parseFrames(Buffer.concat(chunks).toString('utf8'))
  expect(received.length).toBeGreaterThan(0)
  const last = received.at(-1)!
  expect(typeOf(last)).not.toBe('task_finish')

  // It reconnects with the last id it got: the rest, nothing lost or twice.
  const finished = (frames: Frame[]) => frames.some((f) => f.id !== undefined && typeOf(f) === 'task_finish')
  const rest = await readStream(stream, finished, last.id)
  expect(rest.every((f) => f.event === undefined)).toBe(true)
  const whole = await readStream(stream, finished)
  expect([...received, ...rest].map((f) => [f.id, f.data])).toEqual(whole.map((f) => [f.id, f.data]))
}, 60_000)
