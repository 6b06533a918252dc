import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'

// The test Postgres, for every project whose vitest config runs session-postgres's global setup
// (packages/session-postgres/test/global-setup.ts): its URL, and a schema of each test's own.

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

/** The test database's connection string (provided by the global setup). */
export const postgresUrl = (): string => inject('postgresUrl')

/** A schema name no other test uses, so tests never see each other's sessions. */
export const freshSchema = (): string => `kode_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`

/** Drops a test's schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl() })
  await client.connect()
  try {
    await client.query(`drop schema if exists "${schema}" cascade`)
  } finally {
    await client.end()
  }
}
