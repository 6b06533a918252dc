import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Tool } from '@kode/core'
import type { LLMClient } from '@kode/providers'
import { createMemorySessionStore, type SessionStore } from '@kode/session'
import { afterEach } from 'vitest'
import { connectModel } from '../src/model.js'
import { createWebApp, type WebApp } from '../src/server/app.js'

export const publicDir = fileURLToPath(new URL('../dist/public', import.meta.url))

/** A running example server on 127.0.0.1. */
export interface Running {
  url: string
  app: WebApp
  store: SessionStore
  /** Stops the server (once; later calls wait for the same close). */
  close(): Promise<void>
  vanish(): Promise<void>
}

/**
 * `startApp` for a test file: every app it starts is closed after each test. Call it at the top
 * level of the file (it registers an `afterEach`).
 */
export function useApps(): (...args: Parameters<typeof startApp>) => Promise<Running> {
  let running: Running[] = []
  afterEach(async () => {
    await Promise.all(running.map((r) => r.close()))
    running = []
  })
  return async (...args) => {
    const app = await startApp(...args)
    running.push(app)
    return app
  }
}

/**
 * Starts the example's app on an ephemeral port with the CLI's scripted model (or `client`) and
 * a memory store (or `store`, to share one across a "restart").
 */
export async function startApp(
  options: {
    client?: LLMClient
    store?: SessionStore
    delayMs?: number
    tools?: Tool[]
    allowedHosts?: string[]
    releaseAfterMs?: number
    maxBufferedBytes?: number
    bodyTimeoutMs?: number
    /** The port to listen on (a restart at the same address); an ephemeral one by default. */
    port?: number
  } = {},
) {
  const model = options.client
    ? undefined
    : await connectModel(
        { kind: 'scripted', reason: 'scripted-flag', why: 'test' },
        { chunkDelayMs: options.delayMs ?? 0 },
      )
  const store = options.store ?? createMemorySessionStore()
  const app = createWebApp({
    client: options.client ?? model!.client,
    store,
    tools: options.tools ?? [],
    publicDir,
    modelLabel: 'test model',
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.releaseAfterMs !== undefined ? { releaseAfterMs: options.releaseAfterMs } : {}),
    ...(options.maxBufferedBytes !== undefined ? { maxBufferedBytes: options.maxBufferedBytes } : {}),
    ...(options.bodyTimeoutMs !== undefined ? { bodyTimeoutMs: options.bodyTimeoutMs } : {}),
  })
  const server: Server = createServer(app.handle)
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  let closing: Promise<void> | undefined
  return {
    url,
    app,
    store,
    /** Drops every connection and stops listening, leaving the app as it was (a crash, as the page sees it). */
    async vanish() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
    // Once: a test that stops its server early is closed again after it, harmlessly.
    close() {
      closing ??= (async () => {
        await app.close()
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
        await model?.close()
      })()
      return closing
    },
  } satisfies Running
}

/** One SSE frame as received. */
export interface Frame {
  id?: string
  event?: string
  data: string
}

/**
 * Reads a session's SSE stream with fetch until `until` says stop (checked after each frame),
 * then closes the connection. Returns the frames (comments and `retry:` skipped).
 */
export async function readStream(
  url: string,
  until: (frames: Frame[]) => boolean,
  lastEventId?: string,
): Promise<Frame[]> {
  const abort = new AbortController()
  const response = await fetch(url, {
    headers: lastEventId ? { 'last-event-id': lastEventId } : {},
    signal: abort.signal,
  })
  const frames: Frame[] = []
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true })
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const frame: Frame = { data: '' }
        for (const line of block.split('\n')) {
          const colon = line.indexOf(':')
          const field = line.slice(0, colon)
          const value = line.slice(colon + 1).replace(/^ /, '')
          if (field === 'id') frame.id = value
          else if (field === 'event') frame.event = value
          else if (field === 'data') frame.data = value
        }
        if (frame.id === undefined && frame.event === undefined) continue
        frames.push(frame)
        if (until(frames)) return frames
      }
    }
  } finally {
    abort.abort()
  }
  return frames
}

/** The event type of a frame. */
export const typeOf = (frame: Frame): string => (JSON.parse(frame.data) as { type: string }).type

/** Polls `check` until it holds (at most `ms`); for state another process or request changes. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const start = Date.now()
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
