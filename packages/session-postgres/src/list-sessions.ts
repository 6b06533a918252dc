import type { ListSessionsQuery, SessionInfo, StoreWarning } from '@kode/session'
import { toMetaColumn } from './meta-column.js'
import { infoOf, type SessionRow } from './rows.js'
import type { StorePool } from './store-pool.js'

/** Where a page starts: the sort key of the last session before it. */
type After = NonNullable<ListSessionsQuery['after']>

// bigint's range: a cursor time beyond it bounds nothing more than the range's end does.
const INT8_MAX = 2n ** 63n - 1n
const INT8_MIN = -(2n ** 63n)

/**
 * The statement of one `list` read: the sessions `query` asks for, in the list's order (that of
 * the `sessions_in_list_order` index, or `sessions_of_parent_in_list_order`'s for one parent), at most `limit`.
 */
export function listStatement(
  schema: string,
  query: Pick<ListSessionsQuery, 'parentSessionId'>,
  after: After | undefined,
  limit: number | undefined,
): { text: string; values: unknown[] } {
  const values: unknown[] = []
  const param = (value: unknown) => `$${values.push(value)}`
  const where: string[] = []
  if (query.parentSessionId !== undefined) {
    // As the column stores the field: a parent id jsonb cannot hold is wrapped (`meta-column.ts`).
    where.push(
      `meta->'parentSessionId' = ${param(JSON.stringify(toMetaColumn(query.parentSessionId)))}::jsonb`,
    )
  }
  if (after !== undefined) {
    // The times are compared as numeric, exactly, since a cursor may carry times no row has (a
    // fraction, a value beyond bigint); the bigint bound lets the index start at the cursor.
    const floor = param(int8(Math.floor(after.updatedAt)))
    const updated = param(String(after.updatedAt))
    const created = param(String(after.createdAt))
    const id = param(cursorId(after.id))
    where.push(
      `updated_at <= ${floor}::bigint and (updated_at < ${updated}::numeric or (updated_at = ${updated}::numeric and ` +
        `(created_at < ${created}::numeric or (created_at = ${created}::numeric and id collate "C" > ${id}))))`,
    )
  }
  const filter = where.length === 0 ? '' : ` where ${where.join(' and ')}`
  const page = limit === undefined ? '' : ` limit ${param(limit)}`
  return {
    text: `select * from "${schema}".sessions${filter} order by updated_at desc, created_at desc, id collate "C"${page}`,
    values,
  }
}

/**
 * The cursor's id as Postgres can take it, ordering the ids as it does. No text Postgres holds
 * has a NUL, and no session id either: an id comes after `p + "\0" + rest` exactly when it comes
 * after `p`, so the cursor is cut at its first NUL. Ids are compared with `collate "C"`, by their
 * UTF-8 bytes: for session ids (ASCII only) that is JavaScript's order, in which the memory and file
 * stores sort, whatever the database's own collation; against a cursor with other characters too,
 * since any of them comes after every ASCII character in both orders.
 */
function cursorId(id: string): string {
  const nul = id.indexOf('\0')
  return nul === -1 ? id : id.slice(0, nul)
}

/** `n` (an integer-valued number) as bigint text, held to bigint's range. */
function int8(n: number): string {
  const value = BigInt(n)
  return String(value > INT8_MAX ? INT8_MAX : value < INT8_MIN ? INT8_MIN : value)
}

/**
 * The sessions `query` asks for. A row whose `meta` column does not hold a session's metadata is
 * left out (told to `warn`), as the file store leaves out a session it cannot read; a page that
 * loses rows so is filled up from the rows after it, so a page shorter than `limit` still means
 * the list has ended.
 */
export async function listSessions(
  pool: StorePool,
  schema: string,
  query: ListSessionsQuery,
  warn: (warning: StoreWarning) => void,
): Promise<SessionInfo[]> {
  const infos: SessionInfo[] = []
  let after = query.after
  for (;;) {
    const want = query.limit === undefined ? undefined : query.limit - infos.length
    const { text, values } = listStatement(schema, query, after, want)
    const { rows } = await pool.query(text, values)
    for (const row of rows as SessionRow[]) {
      try {
        infos.push(infoOf(row))
      } catch (error) {
        warn({ type: 'unreadable_session', sessionId: row.id, file: `${schema}.sessions`, error })
      }
    }
    const last = rows.at(-1) as SessionRow | undefined
    if (want === undefined || last === undefined || rows.length < want || infos.length === query.limit)
      return infos
    after = { updatedAt: Number(last.updated_at), createdAt: Number(last.created_at), id: last.id }
  }
}
