import type { StorePool } from './store-pool.js'

// Lower-case identifiers only, so the quoted name is the name Postgres shows and no quoting trick
// can reach outside the store's own schema.
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * Throws a `TypeError` unless `schema` is a plain Postgres identifier (`[a-z_][a-z0-9_]*`, 63 at
 * most) that Postgres lets a user create: it reserves names starting with `pg_` for itself.
 */
export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema) || schema.startsWith('pg_')) {
    throw new TypeError(
      `invalid schema name ${JSON.stringify(schema)}: use 1-63 characters from a-z 0-9 _, not starting with a digit or pg_`,
    )
  }
}

/**
 * The tables the store needs, idempotent, including the migration of tables earlier releases made.
 * `sessions` holds one row per session (its metadata, the record count, the writer's lease and its
 * incarnation: a value of its own, so a session created again under an id is told from the one
 * before); `records` one row per history record, in append order. Needs Postgres 13 or later
 * (`gen_random_uuid`).
 */
export function schemaStatements(schema: string): string[] {
  const s = `"${schema}"`
  return [
    `create schema if not exists ${s}`,
    `create table if not exists ${s}.sessions (
      id text primary key,
      meta jsonb not null default '{}',
      created_at bigint not null,
      updated_at bigint not null,
      record_count integer not null default 0,
      lease_epoch bigint not null default 0,
      lease_owner text,
      lease_holder jsonb,
      lease_expires_at timestamptz,
      incarnation text not null default gen_random_uuid()::text
    )`,
    // Tables made before incarnations get the column, each existing session a value of its own (a
    // volatile default fills every row). Looked up first: the alter takes the table's exclusive lock
    // even when the column is there, which every host's start would then wait for.
    `do $$ begin
      if not exists (select 1 from pg_attribute
          where attrelid = '${s}.sessions'::regclass and attname = 'incarnation' and not attisdropped) then
        alter table ${s}.sessions add column incarnation text not null default gen_random_uuid()::text;
      end if;
    end $$`,
    // list() reads sessions newest updated first, ties by id in bytes (`collate "C"`, as
    // `list-sessions.ts` orders them, whatever the database's collation).
    `create index if not exists sessions_in_list_order on ${s}.sessions
      (updated_at desc, created_at desc, id collate "C")`,
    // list({ parentSessionId }) reads one session's sub-agent sessions and forks, in the same order,
    // without a pass over every session; only the sessions that have a parent are in it.
    `create index if not exists sessions_of_parent_in_list_order on ${s}.sessions
      ((meta->'parentSessionId'), updated_at desc, created_at desc, id collate "C")
      where meta->'parentSessionId' is not null`,
    // Earlier releases ordered ids by the database's collation, with these indexes.
    `drop index if exists ${s}.sessions_by_update`,
    `drop index if exists ${s}.sessions_by_parent`,
    `create table if not exists ${s}.records (
      session_id text not null references ${s}.sessions (id) on delete cascade,
      seq integer not null,
      record text not null,
      primary key (session_id, seq)
    )`,
  ]
}

/**
 * Whether the schema holds everything `schemaStatements` makes, and none of the indexes it drops:
 * one catalog read, which needs no privilege beyond the tables' own. `$1` is the quoted schema.
 */
const SCHEMA_CURRENT = `select
    to_regclass($1 || '.records') is not null
    and to_regclass($1 || '.sessions_in_list_order') is not null
    and to_regclass($1 || '.sessions_of_parent_in_list_order') is not null
    and to_regclass($1 || '.sessions_by_update') is null
    and to_regclass($1 || '.sessions_by_parent') is null
    and exists (select 1 from pg_attribute where attrelid = to_regclass($1 || '.sessions')
      and attname = 'incarnation' and not attisdropped) as current`

/**
 * Creates the schema on first use, or brings it up to date. Tables already current are left
 * alone without a statement that locks or needs more than the right to use them: a
 * `create ... if not exists` still needs the right to create (which an application's role the
 * tables were made for by a migration tool lacks), and `create index if not exists` waits for
 * every write under way on the table and holds off new ones meanwhile. Hosts starting together on
 * tables not made yet serialise on an advisory lock, since two concurrent `create table if not
 * exists` can both try to create the table and one fail.
 */
export async function ensureSchema(pool: StorePool, schema: string): Promise<void> {
  const { rows } = await pool.query(SCHEMA_CURRENT, [`"${schema}"`])
  if ((rows[0] as { current: boolean | null } | undefined)?.current === true) return
  await pool.transaction(async (client) => {
    await client.query('select pg_advisory_xact_lock(hashtext($1))', [`kode-session-schema:${schema}`])
    for (const statement of schemaStatements(schema)) await client.query(statement)
  })
}
