/**
 * Maps `items` through `fn` with at most `limit` calls in flight, results in the order of `items`.
 * A store's directory can hold thousands of sessions: reading them all at once opens a file for
 * each, and past the process's limit on open files (256 by default on macOS) the opens fail.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await fn(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
