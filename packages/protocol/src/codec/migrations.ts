/** Turns a decoded record of one format version into a record of the next version. */
export type Migration = (record: Record<string, unknown>) => Record<string, unknown>

/**
 * The history format's migrations: `HISTORY_MIGRATIONS[n - 1]` turns a version-n record into a
 * version-(n + 1) record, so the current version is `HISTORY_MIGRATIONS.length + 1`. The corpus in
 * `test/fixtures/history/v1/` pins what version 1 looks like so every migration is tested against it.
 */
export const HISTORY_MIGRATIONS: readonly Migration[] = [
  // 1 -> 2: version 2 only added the `server_tool` part; every version-1 record is a version-2 record.
  (record) => record,
  // 2 -> 3: version 3 only added record types (compaction, approval_request, approval_decision,
  // tool_progress); every version-2 record is a version-3 record.
  (record) => record,
]

/**
 * Upgrades a record from `fromVersion` to the latest version `migrations` lead to, one version at a
 * time. The result is not validated here: the codec validates it against the current schemas.
 * Throws a `RangeError` for a version the migrations do not cover (a caller bug: the codec checks
 * versions before migrating).
 */
export function migrateToCurrent(
  record: Record<string, unknown>,
  fromVersion: number,
  migrations: readonly Migration[] = HISTORY_MIGRATIONS,
): Record<string, unknown> {
  if (!Number.isInteger(fromVersion) || fromVersion < 1 || fromVersion > migrations.length + 1) {
    throw new RangeError(`no migration path from history format version ${fromVersion}`)
  }
  let current = record
  for (let index = fromVersion - 1; index < migrations.length; index++) current = migrations[index]!(current)
  return current
}
