/**
 * The store's SQL for one schema. Every write that touches the history is a single statement, so
 * Postgres applies it whole or not at all: the records, the record count and the update time move
 * together, and the lease check happens in the same statement as the write it guards.
 */
export function statements(schema: string) {
  const s = `"${schema}"`
  const channel = `'${feedChannel(schema)}'`
  // After the commit, the followers of the session (on every host) learn its new record count.
  const notify = `pg_notify(${channel}, json_build_object('session', $1::text, 'count', base + $3::integer)::text)`
  const expiry = `clock_timestamp() + $LEASE::integer * interval '1 millisecond'`
  const free = `(lease_owner is null or lease_expires_at <= clock_timestamp())`
  const insertRecords = `ins as (
      insert into ${s}.records (session_id, seq, record)
      select $1, (w.base + r.ord)::integer, r.record
      from w, json_array_elements_text($2::json) with ordinality as r (record, ord)
    )`
  return {
    create: `insert into ${s}.sessions (id, meta, created_at, updated_at)
      values ($1, $2::jsonb, $3, $3) on conflict (id) do nothing returning *`,
    info: `select * from ${s}.sessions where id = $1`,
    /**
     * The session's incarnation and its records in order, in one statement, so both come from one
     * snapshot; no row for a missing session, one with a null record for an empty one.
     */
    read: `select s.incarnation, r.seq, r.record from ${s}.sessions s
      left join ${s}.records r on r.session_id = s.id
      where s.id = $1 order by r.seq`,
    /** Records after the first $2, at most $3 of them, each with its session's incarnation. */
    follow: `select r.seq, r.record, s.incarnation from ${s}.records r join ${s}.sessions s on s.id = r.session_id
      where r.session_id = $1 and r.seq > $2 order by r.seq limit $3`,
    /** Only a meta column holding an object: `||` would make an array of any other value. */
    update: `update ${s}.sessions set meta = meta || $2::jsonb
      where id = $1 and jsonb_typeof(meta) = 'object' returning *`,
    /** A plain append: only while no live lease is held; bumps the epoch so an expired holder is fenced off. */
    append: `with w as (
      update ${s}.sessions
      set record_count = record_count + $3::integer,
          updated_at = case when $3::integer > 0 then $4::bigint else updated_at end,
          lease_epoch = lease_epoch + 1, lease_owner = null, lease_holder = null, lease_expires_at = null
      where id = $1 and ${free}
      returning record_count - $3::integer as base
    ), ${insertRecords}
    select base, ${notify} from w`,
    /**
     * An append through a lease: only while the lease's epoch is current, in the incarnation it was
     * taken in (a session created again under its id starts its epochs over); renews the lease.
     */
    leasedAppend: `with w as (
      update ${s}.sessions
      set record_count = record_count + $3::integer,
          updated_at = case when $3::integer > 0 then $4::bigint else updated_at end,
          lease_expires_at = ${expiry.replace('$LEASE', '$7')}
      where id = $1 and lease_epoch = $5 and lease_owner = $6 and incarnation = $8
      returning record_count - $3::integer as base
    ), ${insertRecords}
    select base, ${notify} from w`,
    /** Waits for an append to the session under way on another connection to commit or roll back. */
    lockSession: `select 1 from ${s}.sessions where id = $1 for share`,
    /** Whether the session holds the $3 records $2 (a JSON array) in order at consecutive positions. */
    batchStored: `select r.seq from ${s}.records r
      where r.session_id = $1 and r.record = $2::json ->> 0
        and (select count(*) from json_array_elements_text($2::json) with ordinality as l (record, ord)
          join ${s}.records x on x.session_id = $1 and x.seq = r.seq + l.ord::integer - 1 and x.record = l.record
        ) = $3::integer
      limit 1`,
    /** Takes the lease when it is free or expired, bumping the fencing epoch by the database's clock. */
    acquire: `update ${s}.sessions
      set lease_epoch = lease_epoch + 1, lease_owner = $2,
          lease_holder = jsonb_build_object('pid', $3::integer, 'hostname', $4::text,
            'acquiredAt', floor(extract(epoch from clock_timestamp()) * 1000)),
          lease_expires_at = ${expiry.replace('$LEASE', '$5')}
      where id = $1 and ${free}
      returning lease_epoch, incarnation`,
    renew: `update ${s}.sessions set lease_expires_at = ${expiry.replace('$LEASE', '$4')}
      where id = $1 and lease_epoch = $2 and lease_owner = $3 and incarnation = $5 returning lease_epoch`,
    release: `update ${s}.sessions set lease_owner = null, lease_holder = null, lease_expires_at = null
      where id = $1 and lease_epoch = $2 and lease_owner = $3 and incarnation = $4`,
    /** Who holds the session, when its lease is live. */
    holder: `select lease_owner, lease_holder, lease_expires_at, ${free} as free
      from ${s}.sessions where id = $1`,
    delete: `with d as (delete from ${s}.sessions where id = $1 and ${free} returning id)
      select id, pg_notify(${channel}, json_build_object('session', id, 'deleted', true)::text) from d`,
  }
}

/** The SQL of one store. */
export type Statements = ReturnType<typeof statements>

/**
 * The channel a store's appends notify: `<schema>_records`, or for a schema name too long for a
 * channel name (63 bytes), one derived from it.
 */
export function feedChannel(schema: string): string {
  const name = `${schema}_records`
  if (name.length <= 63) return name
  let hash = 0
  for (const char of schema) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) >>> 0
  return `${schema.slice(0, 45)}_records_${hash.toString(36)}`
}
