/**
 * Upgrades a decoded record from an older format version to the current one, one version at a
 * time. `MIGRATIONS[n]` turns a version-n record into a version-(n+1) record. Version 1 is the
 * first format, so there is nothing to migrate yet; the corpus in `test/fixtures/history/v1/`
 * pins what version 1 looks like so every later migration is tested against it.
 */
const MIGRATIONS: readonly ((record: Record<string, unknown>) => Record<string, unknown>)[] = []

export function migrateToCurrent(
  record: Record<string, unknown>,
  fromVersion: number,
): Record<string, unknown> {
  let current = record
  for (let version = fromVersion; version - 1 < MIGRATIONS.length; version++) {
    const migrate = MIGRATIONS[version - 1]
    if (migrate) current = migrate(current)
  }
  return current
}
