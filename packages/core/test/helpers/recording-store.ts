import type { HistoryEvent } from '@kode/protocol'
import type { SessionStore } from '@kode/session'

/** `store`, recording the records of each append a lease makes, one list per append, in order. */
export function recordingAppends(store: SessionStore): { store: SessionStore; appends: HistoryEvent[][] } {
  const appends: HistoryEvent[][] = []
  const recording: SessionStore = {
    ...store,
    async acquire(sessionId: string) {
      const lease = await store.acquire(sessionId)
      return {
        sessionId,
        release: () => lease.release(),
        append: (records: readonly HistoryEvent[]) => {
          appends.push([...records])
          return lease.append(records)
        },
      }
    },
  }
  return { store: recording, appends }
}
