import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'

/** The test database's connection string (see global-setup.ts). */
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
