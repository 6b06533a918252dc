import { randomUUID } from 'node:crypto'
import { DBOS } from '@dbos-inc/dbos-sdk'
import { dropSchema, freshSchema, postgresUrl } from '../../../../test/postgres/schemas.js'

export { dropSchema, freshSchema, postgresUrl }

// What session-postgres's global setup (this project's too) provides.
declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

/** The DBOS system schema of one test file: its own, dropped afterwards. */
export const freshDbosSchema = (): string => `dbos_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`

/**
 * The URL DBOS's system database is given: the test database, with DBOS's idle-transaction
 * timeout (its default, 60 s) set as a connection option. Otherwise DBOS sends it as a query on
 * every new connection of its pool without waiting for it, and pg 8.23 prints a
 * DeprecationWarning for the query that follows on the busy connection (see docs/scale-out.md).
 */
export function dbosDatabaseUrl(): string {
  const url = new URL(postgresUrl())
  url.searchParams.set('options', '-c idle_in_transaction_session_timeout=60000')
  return url.toString()
}

/**
 * Launches DBOS in this process against the test database, after `register` has registered the
 * workflows (as a host does: registration first, then `DBOS.launch`).
 */
export async function launchDbos(options: {
  schema: string
  executorId: string
  register: () => void
}): Promise<void> {
  DBOS.setConfig({
    name: 'kode-test',
    systemDatabaseUrl: dbosDatabaseUrl(),
    systemDatabaseSchemaName: options.schema,
    // Pinned, as every worker of one deployment must be (see docs/scale-out.md).
    applicationVersion: 'kode-test-1',
    executorID: options.executorId,
    logLevel: 'error',
  })
  options.register()
  await DBOS.launch()
}
