import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/** The reference "everything" server's entry (a devDependency; nothing is downloaded). */
export const EVERYTHING = here('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js')
/** The reference filesystem server's entry. */
export const FILESYSTEM = here('../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js')
/** A small server on the official SDK whose tool list changes on request. */
export const CHANGING = here('../fixtures/changing-server.mjs')
/** A small server on the official SDK over streamable HTTP whose tool answers when told to. */
export const WAITING = here('../fixtures/waiting-http-server.mjs')
/** A small server on the official SDK (stdio, streamable HTTP or HTTP+SSE) that notes the cancellations it receives. */
export const CANCEL = here('../fixtures/cancel-server.mjs')
const LOOPBACK = here('./loopback.cjs')

/** The options that start the everything server over stdio. */
export function everythingStdio(name = 'everything') {
  return { name, command: process.execPath, args: [EVERYTHING, 'stdio'] }
}

/** A reference server listening over HTTP on 127.0.0.1, and how to stop it. */
export interface HttpServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly child: ChildProcess
  stop(): Promise<void>
}

/** Starts the everything server in `mode` (`streamableHttp` serves /mcp, `sse` serves /sse) on a free port. */
export function startEverythingHttp(mode: 'streamableHttp' | 'sse'): Promise<HttpServer> {
  return startHttpServer(['--require', LOOPBACK, EVERYTHING, mode])
}

/**
 * Starts the waiting server (streamable HTTP on /mcp, any path really) on a free port; a
 * `resumable` one keeps its events for clients to resume streams from. `settings` are its
 * `key=value` words (see the fixture).
 */
export function startWaitingHttp(
  options: { resumable?: boolean; settings?: readonly string[] } = {},
): Promise<HttpServer> {
  return startHttpServer([WAITING, ...(options.resumable ? ['resumable'] : []), ...(options.settings ?? [])])
}

/**
 * Starts the cancel server over `mode` (streamable HTTP on any path; HTTP+SSE on /sse) on a free
 * port; a `resumable` streamable-HTTP one names event ids a client can resume its streams from.
 */
export function startCancelHttp(
  mode: 'streamable-http' | 'sse',
  options: { resumable?: boolean } = {},
): Promise<HttpServer> {
  return startHttpServer(options.resumable ? [CANCEL, mode, 'resumable'] : [CANCEL, mode])
}

/** Runs `node ...args`, a server that writes `KODE_TEST_PORT=<port>` to stderr once it listens on 127.0.0.1. */
function startHttpServer(args: readonly string[]): Promise<HttpServer> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const gone = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await gone
  }
  return new Promise((resolve, reject) => {
    let said = ''
    child.stderr?.on('data', (chunk: Buffer) => {
      said += chunk.toString()
      const port = /KODE_TEST_PORT=(\d+)/.exec(said)?.[1]
      if (port) resolve({ origin: `http://127.0.0.1:${port}`, child, stop })
    })
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening: ${said}`)))
  })
}

/**
 * Whether process `pid` exists and has not exited. A zombie counts as exited: a helper whose
 * server died is reaped by init, or never where none reaps orphans (a container without one).
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return true // No /proc (macOS): signal 0 is all there is.
  }
}
