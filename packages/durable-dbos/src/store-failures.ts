import { SessionError, type SessionErrorCode, type SessionLease, type SessionStore } from '@kode/session'

/**
 * `store`, adding to `failures` every error (an object) it throws, its leases' included: the
 * workflow then tells the store's failures apart from the run's own (see `passingStoreFailure`).
 * What the store offers beyond the required methods it offers through this one too, and nothing
 * it lacks.
 */
export function notingStore(store: SessionStore, failures: WeakSet<object>): SessionStore {
  const noted = <T>(result: Promise<T>): Promise<T> =>
    result.catch((error: unknown) => {
      if (typeof error === 'object' && error !== null) failures.add(error)
      throw error
    })
  const readBatches = store.readBatches?.bind(store)
  const follow = store.follow?.bind(store)
  return {
    create: (init) => noted(store.create(init)),
    append: (id, events) => noted(store.append(id, events)),
    acquire: async (id) => {
      const lease = await noted(store.acquire(id))
      return {
        sessionId: lease.sessionId,
        append: (events) => noted(lease.append(events)),
        release: () => noted(lease.release()),
      } satisfies SessionLease
    },
    read: (id) => noted(store.read(id)),
    ...(readBatches ? { readBatches: (id, options) => notedIterable(readBatches(id, options), noted) } : {}),
    ...(follow ? { follow: (id, options) => notedIterable(follow(id, options), noted) } : {}),
    ...(store.maxRecordBytes !== undefined ? { maxRecordBytes: store.maxRecordBytes } : {}),
    info: (id) => noted(store.info(id)),
    update: (id, patch) => noted(store.update(id, patch)),
    list: (options) => noted(store.list(options)),
    delete: (id) => noted(store.delete(id)),
    close: () => noted(store.close()),
  }
}

/** `iterable`, with what its steps throw passed through `noted`. */
function notedIterable<T>(
  iterable: AsyncIterable<T>,
  noted: <R>(result: Promise<R>) => Promise<R>,
): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const iterator = iterable[Symbol.asyncIterator]()
      const stepped: AsyncIterator<T> = { next: (...args) => noted(iterator.next(...args)) }
      const { return: end, throw: fail } = iterator
      if (end) stepped.return = (value) => noted(end.call(iterator, value))
      if (fail) stepped.throw = (error) => noted(fail.call(iterator, error))
      return stepped
    },
  }
}

/**
 * The store's answers that may change while the task waits: the database lost the lease or the
 * connection under an append, or another writer holds a session for now. Every other
 * `SessionError` (a record too large, a corrupt history, a deleted session, a closed store) is the
 * same on the next attempt.
 */
const PASSING: ReadonlySet<SessionErrorCode> = new Set<SessionErrorCode>([
  'session_lease_lost',
  'append_interrupted',
  'session_locked',
])

/**
 * Whether the task failed because the store did (`failures` holds what it threw, see
 * `notingStore`), in a way that may pass: a driver's own error (a connection refused or cut, a
 * statement timeout) or a `SessionError` of `PASSING`. Failures of the run's own (a listener that
 * threw, a model client's bug) are not the store's, and are never retried.
 */
export function passingStoreFailure(error: unknown, failures: WeakSet<object>): boolean {
  if (typeof error !== 'object' || error === null || !failures.has(error)) return false
  return !SessionError.is(error) || PASSING.has(error.code)
}

/**
 * Whether the workflow's lease is gone after `error` (another writer took the session while the
 * database was out of reach): taken again before the retry. After any other failure the lease is
 * kept through the wait, so no other worker takes the task meanwhile; one lost unnoticed fails the
 * next attempt's first append with `session_lease_lost`, and is taken again then.
 */
export function leaseLost(error: unknown): boolean {
  return SessionError.is(error) && error.code === 'session_lease_lost'
}
