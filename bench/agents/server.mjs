// The scripted model every agent loop talks to: an OpenAI Chat Completions endpoint on
// 127.0.0.1 (`POST <origin>/v1/chat/completions`). Every turn's response is rendered once at
// start-up, so answering costs the same for every client; the request's history decides the turn.
import { once } from 'node:events'
import { createServer } from 'node:http'
import { warmUpBody } from '../providers/warm-up.mjs'
import { checkRequest } from './history-check.mjs'
import { renderAll, renderTurn } from './model-stream.mjs'
import { TURNS } from './task.mjs'

/** Bytes per write: a response arrives in several reads, as a real one does. */
const CHUNK_SIZE = 4 * 1024

function drainedOrClosed(res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve(undefined)
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

/** Writes `body` as an event stream in CHUNK_SIZE pieces (chunked, no content-length), then ends. */
async function write(res, body) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  for (let at = 0; at < body.length; at += CHUNK_SIZE) {
    if (res.destroyed) return
    if (!res.write(body.subarray(at, at + CHUNK_SIZE))) await drainedOrClosed(res)
  }
  res.end()
}

/**
 * Starts the server; resolves to its origin and a `close` function. `GET /warmup` answers `ok`;
 * `GET /warmup/parser` streams a large body that warms the HTTP parser (see
 * bench/providers/warm-up.mjs).
 */
export async function startAgentsServer({ port = 0 } = {}) {
  const bodies = renderAll()
  const warmUp = warmUpBody()
  const server = createServer(async (req, res) => {
    const pieces = []
    for await (const piece of req) pieces.push(piece)
    const { pathname } = new URL(req.url ?? '/', 'http://localhost')
    if (pathname === '/warmup') {
      res.end('ok')
      return
    }
    if (pathname === '/warmup/parser') {
      await write(res, warmUp)
      return
    }
    if (req.method !== 'POST' || !pathname.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: `no endpoint at ${req.method} ${pathname}` } }))
      return
    }
    let body
    try {
      const { turn, problem } = checkRequest(JSON.parse(Buffer.concat(pieces).toString('utf8')))
      if (problem || turn > TURNS)
        body = renderTurn(turn ?? 0, `history check failed: ${problem ?? `turn ${turn}`}`)
      else body = bodies[turn - 1]
    } catch (error) {
      body = renderTurn(0, `history check failed: ${String(error)}`)
    }
    await write(res, body)
  })
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve(undefined))
      }),
  }
}
