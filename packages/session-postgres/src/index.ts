/**
 * @kode/session-postgres: a `SessionStore` in a shared Postgres, for hosts that run on several
 * machines. One writer per session across hosts by a lease with a fencing epoch.
 */
export {
  CorruptRecordError,
  SessionAppendInterruptedError,
  SessionLeasedError,
  SessionLeaseLostError,
} from './errors.js'
export type { PostgresFollowedRecord, PostgresFollowOptions } from './follow.js'
export {
  createPostgresSessionStore,
  DEFAULT_FOLLOW_POLL_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_RECORD_BYTES,
  DEFAULT_QUERY_TIMEOUT_MS,
  type PostgresSessionHistory,
  type PostgresSessionStore,
  type PostgresSessionStoreOptions,
} from './postgres-store.js'
export { schemaStatements } from './schema.js'
