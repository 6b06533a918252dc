import { readFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { join } from 'node:path'
import type { ApprovalDecision } from '@kode/core'
import { isValidSessionId, type SessionStore } from '@kode/session'
import { hasSeveralHosts, isJson, LOOPBACK_HOSTS, refusal } from './request-guard.js'
import { type AgentSetup, type LogReset, SessionHub, TaskStateError } from './session-hub.js'
import { controlFrame, eventFrame, openEventStream } from './sse.js'
import { linksJson, type SubAgentLinks } from './sub-agent-links.js'

/** Options of {@link createWebApp}. */
export interface WebAppOptions extends AgentSetup {
  /** The built page: `index.html`, `app.js`, `styles.css`. */
  publicDir: string
  /** A line describing the model, shown by the page (`scripted kode-scripted (offline)`). */
  modelLabel: string
  /** Interval of SSE keep-alive comments, so idle streams survive proxies. Default 15 s. */
  keepAliveMs?: number
  /**
   * Hostnames (no port) the server is reached by besides `localhost`, `127.0.0.1` and `[::1]`:
   * a request whose `Host` names any other is refused (`403`), against DNS rebinding.
   */
  allowedHosts?: readonly string[]
  /**
   * How many bytes may wait for an event-stream reader beyond the log it was sent whole (its
   * backlog, a reset), default 8 MiB. A reader that reads more slowly than events come (a stalled
   * network, a client that stopped reading) is dropped past it, so the server does not hold every
   * event for it; it reconnects with `Last-Event-ID` and misses nothing.
   */
  maxBufferedBytes?: number
  /**
   * How long a request body may take to arrive, in ms (default 30 s): one that trickles in slower
   * (a slow-loris client holding connections open) is a `408` and its connection is closed.
   */
  bodyTimeoutMs?: number
  /**
   * How long a session nobody reads and no task runs in stays in memory, in ms (default 30 s);
   * then it reloads from the store when opened again.
   */
  releaseAfterMs?: number
}

/** The HTTP side of the example: a request handler and what to close on shutdown. */
export interface WebApp {
  handle(req: IncomingMessage, res: ServerResponse): void
  hub: SessionHub
  close(): Promise<void>
}

/** The largest request body taken: a prompt, not an upload. */
const MAX_BODY_BYTES = 256 * 1024

/** What the page may load and connect to: itself only. Nothing inline, nothing from elsewhere. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
}

const STATIC: Record<string, [file: string, type: string]> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/styles.css': ['styles.css', 'text/css; charset=utf-8'],
}

/** The routes of a session, each with the one method it takes. */
const SESSION_ROUTES: ReadonlyMap<string, 'GET' | 'POST'> = new Map([
  ['events', 'GET'],
  ['messages', 'POST'],
  ['approvals', 'POST'],
  ['continue', 'POST'],
  ['interrupt', 'POST'],
])

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * The routes:
 * - `GET /sessions`: the top-level sessions, newest first;
 * - `POST /sessions`: a fresh session id (the session is created by its first message);
 * - `POST /sessions/:id/messages` `{ text }`: starts a task (409 while one runs);
 * - `POST /sessions/:id/approvals` `{ approvals: [{ toolCallId, approved, reason?, sessionId? }] }`: decides the
 *   pending tool approvals and continues the task on the same stream (409 while a task runs or
 *   when the decisions do not fit what is pending, or the session does not exist: none is made);
 * - `POST /sessions/:id/continue`: carries on a task whose server died before it finished (409
 *   while a task runs, here or on another host whose lease has not expired, or when nothing is
 *   left to carry on, as in a session that does not exist: none is made);
 * - `POST /sessions/:id/interrupt`: interrupts the running task (409 when none runs);
 * - `GET /sessions/:id/events`: the session's events as SSE, resumable with `Last-Event-ID`;
 * - messages, approvals and `continue` in a sub-agent's session are 409: its parent's task drives it;
 * - `GET /`, `/app.js`, `/styles.css`: the page.
 */
export function createWebApp(options: WebAppOptions): WebApp {
  const hub = new SessionHub(options, { releaseAfterMs: options.releaseAfterMs })
  const keepAliveMs = options.keepAliveMs ?? 15_000
  const maxBufferedBytes = options.maxBufferedBytes ?? 8 * 1024 * 1024
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000
  const readJson = (req: IncomingMessage) => readJsonBody(req, bodyTimeoutMs)
  // A route that takes no body still needs the JSON type (see `isJson`); a body sent anyway is read
  // (so it is bounded, and its bytes do not linger on the connection) and must parse.
  const readNoBody = async (req: IncomingMessage) => {
    await readJsonBody(req, bodyTimeoutMs, true)
  }
  const streams = new Set<ServerResponse>()
  const allowedHosts = new Set(
    [...LOOPBACK_HOSTS, ...(options.allowedHosts ?? [])].map((host) => host.toLowerCase()),
  )

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (hasSeveralHosts(req)) throw new HttpError(400, 'more than one Host header')
    const refused = refusal(req, allowedHosts)
    if (refused !== undefined) throw new HttpError(403, refused)
    const url = parseTarget(req.url)
    const parts = url.pathname.split('/').filter(Boolean)
    const method = req.method ?? 'GET'
    if (parts[0] !== 'sessions') {
      const asset = STATIC[url.pathname]
      if (!asset) throw new HttpError(404, 'not found')
      // HEAD as GET without the body (uptime checks, `curl -I`); nothing else reads a page.
      if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'method not allowed')
      const body = await readFile(join(options.publicDir, asset[0]))
      const headers = {
        'content-type': asset[1],
        'content-length': body.byteLength,
        'cache-control': 'no-cache',
      }
      res.writeHead(200, { ...headers, ...SECURITY_HEADERS })
      res.end(method === 'HEAD' ? undefined : body)
      return
    }
    if (parts.length === 1) {
      if (method === 'GET') return json(res, 200, await listSessions(options.store, options.modelLabel))
      if (method === 'POST') {
        await readNoBody(req)
        return json(res, 201, { id: crypto.randomUUID() })
      }
      throw new HttpError(405, 'method not allowed')
    }
    const sessionId = parts[1]!
    if (!isValidSessionId(sessionId)) throw new HttpError(400, 'invalid session id')
    const action = parts.slice(2).join('/')
    if (action === 'events' && method === 'GET') return streamEvents(req, res, sessionId, url)
    if (action === 'messages' && method === 'POST') {
      const body = await readJson(req)
      const text = (body as { text?: unknown } | null)?.text
      if (typeof text !== 'string' || text.trim() === '')
        throw new HttpError(400, 'text must be a non-empty string')
      await hub.start(sessionId, text)
      return json(res, 202, { sessionId })
    }
    if (action === 'approvals' && method === 'POST') {
      await hub.continue(sessionId, parseApprovals(await readJson(req)))
      return json(res, 202, { sessionId })
    }
    if (action === 'continue' && method === 'POST') {
      await readNoBody(req)
      await hub.continue(sessionId)
      return json(res, 202, { sessionId })
    }
    if (action === 'interrupt' && method === 'POST') {
      await readNoBody(req)
      await hub.interrupt(sessionId)
      res.writeHead(204).end()
      return
    }
    // A route asked with another method: say which one it takes.
    const allowed = SESSION_ROUTES.get(action)
    if (allowed !== undefined) {
      res.setHeader('allow', allowed)
      throw new HttpError(405, 'method not allowed')
    }
    throw new HttpError(404, 'not found')
  }

  const streamEvents = async (req: IncomingMessage, res: ServerResponse, sessionId: string, url: URL) => {
    // EventSource sends Last-Event-ID when it reconnects; other clients may use the query.
    const header = req.headers['last-event-id']
    const lastEventId =
      (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('lastEventId') ?? undefined
    openEventStream(res)
    streams.add(res)
    // What may wait for this reader: the log sent whole (a backlog, a reset) and a bounded tail.
    let allowed = maxBufferedBytes
    const sendWhole = (frames: string) => {
      res.write(frames)
      allowed = res.writableLength + maxBufferedBytes
    }
    const sendTail = (frame: string) => {
      res.write(frame)
      // A reader this far behind is dropped rather than buffered for without bound. An
      // EventSource dispatches only whole events, so it resumes after the last one it got.
      if (res.writableLength > allowed) res.destroy()
    }
    // Where the replayed sub-agents go: a replay has no `task_start` to say it (see `subAgentLinks`).
    const linksFrame = (links: SubAgentLinks) =>
      links.size > 0 ? controlFrame('sub-agents', linksJson(links)) : ''
    // The session may fail to load: the request is then answered with the error, and forgotten.
    const subscribed = hub.subscribe(
      sessionId,
      lastEventId,
      (backlog, resume, links) => {
        if (resume.reset) res.write(controlFrame('reset', { reason: 'unknown Last-Event-ID' }))
        // One write for the whole backlog: a reconnect costs one syscall, not one per event.
        sendWhole(linksFrame(links) + backlog.map(eventFrame).join(''))
      },
      {
        event: (event) => sendTail(eventFrame(event)),
        // The log started over (another host's history changed what was shown, or the session
        // was deleted): the client drops what it rendered, as after an unknown Last-Event-ID.
        reset: (log, why, links) => {
          res.write(controlFrame('reset', resetReason(why)))
          sendWhole(linksFrame(links) + log.map(eventFrame).join(''))
        },
        links: (links) => sendTail(linksFrame(links)),
      },
    )
    subscribed.catch(() => streams.delete(res))
    const unsubscribe = await subscribed
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), keepAliveMs)
    const stop = () => {
      clearInterval(keepAlive)
      unsubscribe()
      streams.delete(res)
    }
    res.on('close', stop)
    if (res.destroyed) stop()
  }

  return {
    hub,
    handle(req, res) {
      route(req, res).catch((error: unknown) => {
        const status = error instanceof HttpError ? error.status : error instanceof TaskStateError ? 409 : 500
        if (status === 500) console.error(error)
        const message = status === 500 ? 'internal error' : (error as Error).message
        // The rest of a body too large or too slow to read is still on the connection: close it
        // after the answer, or the client's next request on it would wait behind those bytes.
        if ((status === 413 || status === 408) && !res.headersSent) res.setHeader('connection', 'close')
        if (res.headersSent) res.end()
        else json(res, status, { error: message })
      })
    },
    async close() {
      await hub.close()
      for (const res of streams) res.end()
    },
  }
}

/**
 * The data of a `reset` frame for a log that started over. A deletion says so (`deleted`), and
 * whether a task of this server that ran in the session was stopped (`stoppedTask`), for the page
 * to tell its user.
 */
function resetReason(why: LogReset): { reason: string; deleted?: true; stoppedTask?: boolean } {
  switch (why.kind) {
    case 'replay':
      return { reason: 'the replay started over' }
    case 'deleted':
      return { reason: 'the session was deleted', deleted: true, stoppedTask: why.stoppedTask }
    default: {
      const never: never = why
      return never
    }
  }
}

/** The body of `POST /sessions/:id/approvals`, checked field by field: one decision per call. */
function parseApprovals(body: unknown): ApprovalDecision[] {
  const approvals = (body as { approvals?: unknown } | null)?.approvals
  if (!Array.isArray(approvals) || approvals.length === 0)
    throw new HttpError(400, 'approvals must be a non-empty array')
  return approvals.map((item: unknown, i) => {
    const { toolCallId, approved, reason, sessionId } = (item ?? {}) as Record<string, unknown>
    if (typeof toolCallId !== 'string' || toolCallId === '')
      throw new HttpError(400, `approvals[${i}].toolCallId must be a non-empty string`)
    if (typeof approved !== 'boolean') throw new HttpError(400, `approvals[${i}].approved must be a boolean`)
    if (reason !== undefined && typeof reason !== 'string')
      throw new HttpError(400, `approvals[${i}].reason must be a string`)
    if (sessionId !== undefined && typeof sessionId !== 'string')
      throw new HttpError(400, `approvals[${i}].sessionId must be a string`)
    return {
      toolCallId,
      approved,
      ...(reason !== undefined && reason !== '' ? { reason } : {}),
      // The session the call waits in: tells apart two sub-agents' calls that share an id.
      ...(sessionId !== undefined ? { sessionId } : {}),
    }
  })
}

/** The request's target as a URL; one that is not a path (an absolute form that does not parse) is a 400. */
function parseTarget(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'http://localhost')
  } catch {
    throw new HttpError(400, 'invalid request target')
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
  res.end(JSON.stringify(body))
}

/**
 * The request's JSON body, read within `timeoutMs`; with `mayBeEmpty`, `undefined` for none. Every
 * POST must say it is JSON, with a body or without: no page of another site can send that type
 * without the browser asking first (a CORS preflight this server never grants), so a POST the
 * user's browser was made to send elsewhere (a form, a `no-cors` fetch) is refused even where it
 * carries no `Origin`.
 */
async function readJsonBody(req: IncomingMessage, timeoutMs: number, mayBeEmpty = false): Promise<unknown> {
  if (!isJson(req))
    throw new HttpError(415, 'a POST must be sent as application/json, with or without a body')
  const read = readBody(req)
  // After a timeout nobody awaits it: its connection closes under it.
  read.catch(() => {})
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new HttpError(408, `the body did not arrive within ${timeoutMs} ms`)),
      timeoutMs,
    )
  })
  let body: Buffer
  try {
    body = await Promise.race([read, late])
  } finally {
    clearTimeout(timer)
  }
  if (mayBeEmpty && body.length === 0) return undefined
  let text: string
  try {
    // A byte order mark is dropped, as JSON allows a reader to; bytes that are not UTF-8 are
    // refused rather than changed into U+FFFD on their way into the history.
    text = new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    throw new HttpError(400, 'the body is not UTF-8')
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new HttpError(400, 'the body is not JSON')
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `the body is larger than ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** One row of the page's session list. */
export interface SessionRow {
  id: string
  title?: string
  updatedAt: number
  recordCount: number
}

async function listSessions(
  store: SessionStore,
  model: string,
): Promise<{ model: string; sessions: SessionRow[] }> {
  const sessions = (await store.list())
    .filter((info) => info.subAgent === undefined)
    .map((info) => ({
      id: info.id,
      updatedAt: info.updatedAt,
      recordCount: info.recordCount,
      ...(info.title !== undefined ? { title: info.title } : {}),
    }))
  return { model, sessions }
}
