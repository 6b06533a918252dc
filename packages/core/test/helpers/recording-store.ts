import type { HistoryEvent } from '@kode/protocol'
import type { SessionStore } from '@kode/session'

/**
 * `store`, with every append a lease makes going through `append` (`next` hands the records to
 * the real lease): how a test watches, slows down or fails the writes of a session.
 */
export function withAppends(
  store: SessionStore,
  append: (
    records: readonly HistoryEvent[],
    next: (records: readonly HistoryEvent[]) => Promise<void>,
  ) => Promise<void>,
): SessionStore {
  return {
    ...store,
    async acquire(sessionId: string) {
      const lease = await store.acquire(sessionId)
      return {
        sessionId,
        release: () => lease.release(),
        append: (records: readonly HistoryEvent[]) => append(records, (sent) => lease.append(sent)),
      }
    },
  }
}

/** `store`, recording the records of each append a lease makes, one list per append, in order. */
export function recordingAppends(store: SessionStore): { store: SessionStore; appends: HistoryEvent[][] } {
  const appends: HistoryEvent[][] = []
  const recording = withAppends(store, (records, next) => {
    appends.push([...records])
    return next(records)
  })
  return { store: recording, appends }
}
