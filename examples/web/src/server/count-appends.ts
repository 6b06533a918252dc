import type { HistoryEvent } from '@kode/protocol'
import type { SessionLease, SessionStore } from '@kode/session'

/**
 * The store as the engine of one session sees it, telling the records written to that session
 * (`onAppended` after each append that succeeded): the server then knows how many records its own
 * task's events stand for, which records after them came from elsewhere, and which session its
 * task writes to. Every other member is the store's own.
 */
export function countAppends(
  store: SessionStore,
  sessionId: string,
  onAppended: (records: readonly HistoryEvent[]) => void,
): SessionStore {
  const counted = async (id: string, events: readonly HistoryEvent[], write: () => Promise<void>) => {
    await write()
    if (id === sessionId) onAppended(events)
  }
  const append: SessionStore['append'] = (id, events) => counted(id, events, () => store.append(id, events))
  const acquire: SessionStore['acquire'] = async (id) => {
    const lease = await store.acquire(id)
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
