/**
 * Where a follow of a session's history starts: `FollowOptions.from`, the number of records
 * already seen (default 0). Every store's `follow` checks its option with this one rule, so each
 * refuses the same positions with the same error.
 *
 * @throws TypeError unless `from` is absent or a non-negative safe integer.
 */
export function followStart(from: number | undefined): number {
  const start = from ?? 0
  if (!Number.isSafeInteger(start) || start < 0)
    throw new TypeError(`follow: from must be a non-negative integer, got ${String(from)}`)
  return start
}
