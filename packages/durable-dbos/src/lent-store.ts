import { type SessionLease, SessionLockedError, type SessionStore } from '@kode/session'

/**
 * The store as the task's agent sees it: acquiring the task's session hands out the lease the
 * workflow already holds, and releasing it gives nothing back (the workflow releases it once the
 * task is over). So the session is held from before the workflow reads the history (to decide
 * whether the task runs, carries on or is done) to after its last record, with no gap another
 * writer could slip into. Every other session (a sub-agent's) goes to the store as usual.
 *
 * What the store offers beyond the required methods (`readBatches`, `follow`, `maxRecordBytes`) it offers through
 * this one too, and nothing it lacks: callers that test for them (a replay reading in batches, a
 * watcher following the session) then read as they would from the store itself.
 */
export function lentStore(store: SessionStore, lease: SessionLease): SessionStore {
  const { sessionId } = lease
  let lent = false
  const borrowed: SessionLease = {
    sessionId,
    append: (events) => lease.append(events),
    release: async () => {
      lent = false
    },
  }
  return {
    create: (init) => store.create(init),
    append: (id, events) => (id === sessionId ? lease.append(events) : store.append(id, events)),
    async acquire(id) {
      if (id !== sessionId) return store.acquire(id)
      // One holder at a time, as the store itself would have it.
      if (lent) throw new SessionLockedError(id, undefined, undefined, 'this-store')
      lent = true
      return borrowed
    },
    read: (id) => store.read(id),
    ...(store.readBatches ? { readBatches: store.readBatches.bind(store) } : {}),
    ...(store.follow ? { follow: store.follow.bind(store) } : {}),
    ...(store.maxRecordBytes !== undefined ? { maxRecordBytes: store.maxRecordBytes } : {}),
    info: (id) => store.info(id),
    update: (id, patch) => store.update(id, patch),
    list: (options) => store.list(options),
    delete: (id) => store.delete(id),
    // The host owns the store: an agent closing "its" store must not close it for every task.
    close: async () => {},
  }
}
