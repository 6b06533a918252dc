// The local SSE server every client is measured against. Each scenario is rendered once, up
// front, so that answering costs the same few buffer writes for every client.
import { once } from 'node:events'
import { createServer } from 'node:http'
import { SCENARIOS } from './scenarios.mjs'
import { warmUpBody } from './warm-up.mjs'
import { renderStream, WIRE_NAMES, wireForPath } from './wires/index.mjs'

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

/** Bytes per write: large enough that the client, not the server or TCP, dominates. */
export const CHUNK_SIZE = 16 * 1024

/**
 * Starts the server on 127.0.0.1. A request is routed by its path: the first segment names the
 * scenario (`/text/...`, `/tool/...`) and the endpoint names the wire (`.../chat/completions`,
 * `.../messages`, `...:streamGenerateContent`, `.../responses`), so each client's `baseUrl` is
 * `<origin>/<scenario>/<version>`. `GET /warmup` answers `ok` (workers load `fetch` with it);
 * `GET /warmup/parser` streams a large body that warms the HTTP parser (see warm-up.mjs).
 * Resolves to the server's origin and a `close` function.
 */
export async function startBenchServer({ port = 0, chunkSize = CHUNK_SIZE } = {}) {
  const bodies = new Map()
  for (const wire of WIRE_NAMES) {
    for (const scenario of SCENARIOS) bodies.set(`${scenario} ${wire}`, renderStream(wire, scenario))
  }

  const warmUp = warmUpBody()

  const server = createServer(async (req, res) => {
    // Read the whole request first, as a real API does before it answers.
    for await (const _ of req);
    const { pathname } = new URL(req.url ?? '/', 'http://localhost')
    if (pathname === '/warmup') {
      res.end('ok')
      return
    }
    const scenario = pathname.split('/')[1]
    const body = pathname === '/warmup/parser' ? warmUp : bodies.get(`${scenario} ${wireForPath(pathname)}`)
    if (!body) {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: `no bench stream at ${req.method} ${pathname}` } }))
      return
    }
    // No content-length: chunked, like the real APIs.
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    for (let at = 0; at < body.length; at += chunkSize) {
      if (res.destroyed) return
      if (!res.write(body.subarray(at, at + chunkSize))) await drainedOrClosed(res)
    }
    res.end()
  })
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  return {
    origin: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve(undefined))
      }),
  }
}
