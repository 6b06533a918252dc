/**
 * Whether `values` holds `run` from `start` on: the very same objects, compared by identity (a
 * history message, and the wire items made from it, are never changed once made).
 */
export function holdsRun(values: readonly unknown[], start: number, run: readonly unknown[]): boolean {
  if (start + run.length > values.length) return false
  for (let i = 0; i < run.length; i++) if (values[start + i] !== run[i]) return false
  return true
}
