import type { HistoryEvent } from '@kode/protocol'
import type { SessionLease, SessionStore } from '@kode/session'

/**
 * The store as the engine of one session sees it, telling the records written to that session
 * (`onAppended` after each append that succeeded): the server then knows how many records its own
 * task's events stand for, which records after them came from elsewhere, and which session its
 * task writes to. `onTaken` tells how many records the session held when a task took its writer:
 * the history the task goes on from, which another host may have grown since the server read it.
 * Every other member is the store's own.
 */
export function countAppends(
  store: SessionStore,
  sessionId: string,
  onAppended: (records: readonly HistoryEvent[]) => void,
  onTaken: (recordCount: number) => void,
): SessionStore {
  const counted = async (id: string, events: readonly HistoryEvent[], write: () => Promise<void>) => {
    await write()
    if (id === sessionId) onAppended(events)
  }
  const append: SessionStore['append'] = (id, events) => counted(id, events, () => store.append(id, events))
  const acquire: SessionStore['acquire'] = async (id) => {
    const lease = await store.acquire(id)
    if (id === sessionId) {
      try {
        // Nobody else writes the session while the lease is held: this count stays the task's start.
        onTaken((await store.info(id))?.recordCount ?? 0)
      } catch (error) {
        await lease.release().catch(() => {})
        throw error
      }
    }
    const counting: SessionLease = {
      sessionId: lease.sessionId,
      append: (events) => counted(id, events, () => lease.append(events)),
      release: () => lease.release(),
    }
    return counting
  }
  return new Proxy(store, {
    get(target, key) {
      if (key === 'append') return append
      if (key === 'acquire') return acquire
      const value: unknown = Reflect.get(target, key)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
