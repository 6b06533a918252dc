/**
 * How deep a server's tool description or structured content may nest arrays and objects, the
 * value itself being the first level. Far beyond any real schema or answer, and far below the
 * depth at which `JSON.stringify` (a provider's request body, a history record) runs out of stack,
 * or a history record is refused: a server's value nested without end would otherwise fail every
 * model call, or the call's result.
 */
export const MAX_NESTING = 100

/** Whether `value` nests arrays and objects deeper than `limit` levels; walked without recursion. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next
    if (typeof item !== 'object' || item === null) continue
    if (depth > limit) return true
    for (const child of Object.values(item)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1])
    }
  }
  return false
}
