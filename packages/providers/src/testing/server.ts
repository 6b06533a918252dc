import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { type ChunkOptions, splitBytes } from './chunking.js'

/** One request as the server received it. */
export interface RecordedRequest {
  method: string
  /** Path and query, e.g. `/v1/chat/completions`. */
  url: string
  /** Header names lower-cased; repeated headers joined with `, `. */
  headers: Record<string, string>
  /** The body parsed as JSON, or the raw text when it is not JSON. */
  body: unknown
  rawBody: string
}

/** What the server answers to one request. Every field is optional. */
export interface ScriptedResponse {
  /** Default 200. */
  status?: number
  /**
   * Response headers. `content-type` defaults to `text/event-stream` for a 2xx status and to
   * `application/json` otherwise. Bodies are always sent chunked, with no content-length.
   */
  headers?: Record<string, string>
  /** The body: a string, bytes, or a list of them (SSE frames) sent back to back. */
  body?: string | Uint8Array | readonly (string | Uint8Array)[]
  /** How the body is cut into writes; `false` sends it in one write. Default: the server's. */
  chunks?: ChunkOptions | false
  /** Wait before sending the status line. */
  delayMs?: number
  /** Wait between two writes (default: one event-loop turn, so the client reads them apart). */
  chunkDelayMs?: number
  /** Reset the connection after this many body bytes (a cut stream). */
  resetAfterBytes?: number
  /** Stop sending after this many body bytes and keep the connection open (a stalled stream). */
  stallAfterBytes?: number
}

/** Answers a request the queue does not cover; `index` counts requests from 0. */
export type ResponseHandler = (
  request: RecordedRequest,
  index: number,
) => ScriptedResponse | Promise<ScriptedResponse>

/** How the exchange for one request ended. */
export type ResponseEnd =
  /** The server sent the whole response. */
  | 'completed'
  /** The client closed the connection before the response was complete. */
  | 'client_closed'
  /** The server reset the connection on purpose (`resetAfterBytes`). */
  | 'reset'

/** Options of {@link createSseTestServer}. */
export interface SseTestServerOptions {
  /** Default chunking of every response body. Default `{ maxBytes: 200, seed: 1 }`. */
  chunks?: ChunkOptions | false
  /** Answers requests when the queue is empty. */
  handler?: ResponseHandler
}

/** A local HTTP server on 127.0.0.1 that records requests and plays scripted responses. */
export interface SseTestServer {
  /** `http://127.0.0.1:<port>`: use it as a client's `baseUrl`. */
  readonly url: string
  /** Every request received, in order. */
  readonly requests: readonly RecordedRequest[]
  /** Queues responses; each request takes the next one, else goes to the handler. */
  enqueue(...responses: ScriptedResponse[]): void
  /** Sets (or clears) the handler for requests the queue does not cover. */
  handle(handler: ResponseHandler | undefined): void
  /** Resolves when the exchange of request `index` (from 0) has ended, and how. */
  ended(index: number): Promise<ResponseEnd>
  /** Closes every connection (stalled ones too) and stops listening. */
  close(): Promise<void>
}

/**
 * Starts a scripted SSE server on 127.0.0.1 with an ephemeral port. Responses come from the queue
 * (`enqueue`), else from the handler; with neither, the server answers 500 with a JSON error that
 * says so. Bodies are cut into seeded-random chunk sizes that split UTF-8 characters, and faults
 * can be injected per response: status and headers (`Retry-After`), delays, a reset after N
 * bytes, a stall after N bytes.
 */
export async function createSseTestServer(options: SseTestServerOptions = {}): Promise<SseTestServer> {
  const queue: ScriptedResponse[] = []
  const requests: RecordedRequest[] = []
  const endings = new Map<number, Deferred<ResponseEnd>>()
  const sockets = new Set<Socket>()
  let handler = options.handler
  const defaultChunks = options.chunks ?? { maxBytes: 200, seed: 1 }

  const endingOf = (index: number): Deferred<ResponseEnd> => {
    let deferred = endings.get(index)
    if (!deferred) {
      deferred = defer<ResponseEnd>()
      endings.set(index, deferred)
    }
    return deferred
  }

  const server = createServer((req, res) => {
    const index = requests.length
    const ending = endingOf(index)
    let outcome: ResponseEnd | undefined
    res.on('close', () => ending.resolve(outcome ?? (res.writableFinished ? 'completed' : 'client_closed')))
    void readRequest(req).then(async (request) => {
      requests.push(request)
      const script = queue.shift() ?? (await answerUnscripted(handler, request, index))
      await play(res, script, script.chunks ?? defaultChunks, () => {
        outcome = 'reset'
      })
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...responses) => {
      queue.push(...responses)
    },
    handle: (next) => {
      handler = next
    },
    ended: (index) => endingOf(index).promise,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

async function answerUnscripted(
  handler: ResponseHandler | undefined,
  request: RecordedRequest,
  index: number,
): Promise<ScriptedResponse> {
  if (handler) return handler(request, index)
  return {
    status: 500,
    body: JSON.stringify({
      error: { message: `no scripted response for request ${index} (${request.url})` },
    }),
  }
}

/** Sends one scripted response; `onReset` runs just before a scripted reset. */
async function play(
  res: ServerResponse,
  script: ScriptedResponse,
  chunks: ChunkOptions | false,
  onReset: () => void,
): Promise<void> {
  if (script.delayMs) await wait(script.delayMs)
  const status = script.status ?? 200
  const contentType = status >= 200 && status < 300 ? 'text/event-stream' : 'application/json'
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-cache', ...script.headers })
  res.flushHeaders()
  const bytes = toBytes(script.body)
  const limit = Math.min(bytes.length, script.resetAfterBytes ?? Infinity, script.stallAfterBytes ?? Infinity)
  const pieces = chunks === false ? [bytes.subarray(0, limit)] : splitBytes(bytes.subarray(0, limit), chunks)
  for (const piece of pieces) {
    if (res.destroyed) return
    res.write(piece)
    await wait(script.chunkDelayMs ?? 0)
  }
  if (script.resetAfterBytes !== undefined && script.resetAfterBytes <= bytes.length) {
    onReset()
    res.socket?.resetAndDestroy()
    return
  }
  if (script.stallAfterBytes !== undefined && script.stallAfterBytes <= bytes.length) return
  res.end()
}

async function readRequest(req: IncomingMessage): Promise<RecordedRequest> {
  const parts: Buffer[] = []
  for await (const part of req) parts.push(part as Buffer)
  const rawBody = Buffer.concat(parts).toString('utf8')
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return { method: req.method ?? 'GET', url: req.url ?? '/', headers, body: parseJson(rawBody), rawBody }
}

function toBytes(body: ScriptedResponse['body']): Uint8Array {
  if (body === undefined) return new Uint8Array()
  if (typeof body === 'string') return Buffer.from(body, 'utf8')
  if (body instanceof Uint8Array) return body
  return Buffer.concat(body.map((piece) => (typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece)))
}

function parseJson(text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Waits `ms`; 0 still yields one macrotask so consecutive writes leave as separate segments. */
function wait(ms: number): Promise<void> {
  return new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)))
}

interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
}

function defer<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}
