import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SessionStore } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { createPostgresSessionStore } from '@kode/session-postgres'
import { connectModel, openWorkspace, readOnlyBuiltinTools, resolveProvider, systemPrompt } from './model.js'
import { saveNoteTool } from './note-tool.js'
import { createWebApp } from './server/app.js'

/** What stops the server from listening, by `code`, with what to do about it. */
const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the address is in use (EADDRINUSE); stop what uses it, or choose another PORT',
  EACCES: 'permission denied (EACCES); a port below 1024 needs privileges, choose another PORT',
  EADDRNOTAVAIL: 'no interface of this machine has that address (EADDRNOTAVAIL); check HOST',
  ENOTFOUND: 'HOST names no address (ENOTFOUND); check HOST',
}

// `pnpm start`: PORT (default 3000), HOST (default 127.0.0.1: the tools read this directory, so
// the server is local unless you choose otherwise), KODE_ALLOWED_HOSTS (the comma-separated names
// the server is reached by besides the loopback ones and HOST; any other `Host` is refused, against
// DNS rebinding), KODE_SESSIONS_DIR (default .kode/sessions),
// KODE_POSTGRES_URL (sessions in a Postgres several servers share, instead of files) with
// KODE_POSTGRES_SCHEMA (default kode), and the CLI's model variables (ANTHROPIC_API_KEY,
// OPENAI_API_KEY, ...; none: the offline model).
const env = process.env
const port = portOf(env.PORT ?? '3000')
const host = env.HOST ?? '127.0.0.1'
// The names a browser may reach the server by: HOST itself (unless it is every interface) and
// the ones listed. Behind a proxy or on 0.0.0.0, list the name users type.
const allowedHosts = [
  ...(['0.0.0.0', '::', ''].includes(host) ? [] : [host.includes(':') ? `[${host}]` : host]),
  ...(env.KODE_ALLOWED_HOSTS ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean),
]
const cwd = process.cwd()
const sessionsDir = resolve(cwd, env.KODE_SESSIONS_DIR ?? '.kode/sessions')

const model = await connectModel(resolveProvider({}, env), {
  chunkDelayMs: Number(env.KODE_SCRIPTED_DELAY_MS ?? 15),
})
const workspace = await openWorkspace(cwd)
// With Postgres, any of several servers serves any session, and a page follows a task that
// runs on another server.
const store: SessionStore = env.KODE_POSTGRES_URL
  ? createPostgresSessionStore({
      connectionString: env.KODE_POSTGRES_URL,
      schema: env.KODE_POSTGRES_SCHEMA ?? 'kode',
    })
  : createFileSessionStore({ dir: sessionsDir })
const where = env.KODE_POSTGRES_URL ? `postgres schema ${env.KODE_POSTGRES_SCHEMA ?? 'kode'}` : sessionsDir
const app = createWebApp({
  client: model.client,
  store,
  // The CLI's read-only tools, and one that writes and so asks the page for approval.
  tools: [...readOnlyBuiltinTools(workspace), saveNoteTool(resolve(cwd, '.kode/notes.md'))],
  system: systemPrompt(workspace.root, { changes: false }),
  publicDir: join(dirname(fileURLToPath(import.meta.url)), '..', 'public'),
  modelLabel: model.label,
  allowedHosts,
})
const server = createServer(app.handle)
// Before it listens, an error is one the address caused (in use, not this machine's): say which
// and stop, rather than crash with a stack trace.
const cannotListen = (error: NodeJS.ErrnoException) => {
  console.error(
    `kode web: cannot listen on ${host}:${port}: ${LISTEN_ERRORS[error.code ?? ''] ?? error.message}`,
  )
  void close(1)
}
server.once('error', cannotListen)
server.listen(port, host, () => {
  server.off('error', cannotListen)
  // PORT=0 takes any free port: print the one it got.
  const { port: bound } = server.address() as AddressInfo
  console.log(`kode web on http://${host}:${bound}  model: ${model.label}  sessions: ${where}`)
  if (model.offline)
    console.log(`offline: ${model.offline.why}; set ANTHROPIC_API_KEY (or another key) for a real model`)
  // Anyone who reaches the port drives the agent with this machine's files and model key.
  if (!['127.0.0.1', 'localhost', '::1'].includes(host))
    console.log(
      `warning: HOST=${host} lets other machines in, and the server has no login: ` +
        'put an authenticating proxy in front of it (see docs/web.md)',
    )
})

let closing = false
async function close(status: number): Promise<void> {
  if (closing) return
  closing = true
  server.close()
  await app.close()
  await store.close()
  await model.close()
  process.exit(status)
}
const shutdown = () => void close(0)
process.on('SIGINT', shutdown)
process.on('SIGTERM', shutdown)

/** `PORT` as a number; anything but a port number stops the server with a usage error (status 2). */
function portOf(value: string): number {
  const port = /^\d{1,5}$/.test(value.trim()) ? Number(value) : Number.NaN
  if (port >= 0 && port <= 65_535) return port
  console.error(`kode web: PORT must be a port number from 0 to 65535 (got ${JSON.stringify(value)})`)
  process.exit(2)
}
