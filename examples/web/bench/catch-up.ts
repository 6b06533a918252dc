import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { createClient } from '@kode/providers'
import { createSseTestServer, frameChat } from '@kode/providers/testing'
import { createMemorySessionStore } from '@kode/session'
import { createWebApp } from '../src/server/app.js'

// pnpm --filter ./examples/web bench
// Figures for the SSE endpoint, on this machine, with a memory store and a local scripted model:
// - catch-up: a client reconnecting with Last-Event-ID to a finished 1,000-event session, time
//   from the request to the last missed event received (also: the whole log, no Last-Event-ID);
// - throughput: events per second reaching one reader, live while a task streams, and from the
//   held log alone.
// It prints figures and asserts nothing.

const SESSION = '0b7c4c3e-2222-4aaa-8bbb-000000000001'

function deltas(count: number): string[] {
  const chunk = (delta: unknown, finish: string | null = null) =>
    JSON.stringify({
      id: 'chatcmpl-b',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  return frameChat([
    chunk({ role: 'assistant', content: '' }),
    ...Array.from({ length: count }, (_, i) => chunk({ content: `word${i} ` })),
    chunk({}, 'stop'),
  ])
}

/** Reads an SSE response until `events` frames with an id arrived; returns the ms it took. */
async function read(
  url: string,
  events: number,
  lastEventId?: string,
): Promise<{ ms: number; ids: string[] }> {
  const start = performance.now()
  const abort = new AbortController()
  const response = await fetch(url, {
    headers: lastEventId ? { 'last-event-id': lastEventId } : {},
    signal: abort.signal,
  })
  const decoder = new TextDecoder()
  const ids: string[] = []
  let buffer = ''
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    const frames = buffer.split('\n\n')
    buffer = frames.pop()!
    for (const frame of frames) {
      const id = /^id: (.*)$/m.exec(frame)?.[1]
      if (id !== undefined) ids.push(id)
    }
    if (ids.length >= events) break
  }
  const ms = performance.now() - start
  abort.abort()
  return { ms, ids }
}

async function session(deltaCount: number) {
  const model = await createSseTestServer({
    chunks: false,
    handler: () => ({ body: deltas(deltaCount), chunks: false }),
  })
  const client = createClient({ api: 'openai-chat', model: 'm', apiKey: 'sk-bench', baseUrl: model.url })
  const app = createWebApp({
    client,
    store: createMemorySessionStore(),
    tools: [],
    publicDir: '.',
    modelLabel: 'bench',
  })
  const server = createServer(app.handle)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    events: `${url}/sessions/${SESSION}/events`,
    app,
    async close() {
      await app.close()
      server.closeAllConnections()
      server.close()
      await model.close()
    },
  }
}

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
  return `median ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms, min ${sorted[0]!.toFixed(2)} ms`
}

async function catchUp() {
  const s = await session(992)
  await fetch(`${s.url}/sessions/${SESSION}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'go' }),
  })
  await s.app.hub.idle(SESSION)
  // The log's length: read it once, to its task_finish (the stream itself stays open).
  const full = await readAll(s.events)
  const total = full.length
  const firstId = full[0]!
  const missed = total - 1
  for (let i = 0; i < 20; i++) await read(s.events, missed, firstId) // warm-up
  const resumed: number[] = []
  const fresh: number[] = []
  for (let i = 0; i < 100; i++) resumed.push((await read(s.events, missed, firstId)).ms)
  for (let i = 0; i < 100; i++) fresh.push((await read(s.events, total)).ms)
  console.log(`session: ${total} events`)
  console.log(`reconnect with Last-Event-ID of the first event (${missed} missed): ${stats(resumed)}`)
  console.log(`open with no Last-Event-ID (all ${total}):                        ${stats(fresh)}`)
  await s.close()
}

/** Every id of a finished session's log (its last event is task_finish). */
async function readAll(url: string): Promise<string[]> {
  const abort = new AbortController()
  const response = await fetch(url, { signal: abort.signal })
  const decoder = new TextDecoder()
  const ids: string[] = []
  let buffer = ''
  let finished = false
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    const frames = buffer.split('\n\n')
    buffer = frames.pop()!
    for (const frame of frames) {
      const id = /^id: (.*)$/m.exec(frame)?.[1]
      if (id !== undefined) ids.push(id)
      if (frame.includes('"type":"task_finish"')) finished = true
    }
    if (finished) break
  }
  abort.abort()
  return ids
}

async function throughput() {
  const count = 20_000
  const s = await session(count)
  const reader = readAll(s.events)
  const start = performance.now()
  await fetch(`${s.url}/sessions/${SESSION}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'go' }),
  })
  const ids = await reader
  const liveMs = performance.now() - start
  console.log(
    `live: ${ids.length} events in ${liveMs.toFixed(0)} ms = ${Math.round((ids.length / liveMs) * 1000)} events/s (model stream, engine, store, SSE)`,
  )
  const held: number[] = []
  for (let i = 0; i < 5; i++) held.push((await read(s.events, ids.length)).ms)
  const best = Math.min(...held)
  console.log(
    `held log: ${ids.length} events in ${best.toFixed(0)} ms = ${Math.round((ids.length / best) * 1000)} events/s (best of 5, SSE endpoint alone)`,
  )
  await s.close()
}

await catchUp()
await throughput()
