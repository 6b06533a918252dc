import { decodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import { SessionError, sessionNotFound, storeClosed } from '../errors.js'
import { assertSessionId } from '../session-id.js'
import {
  type CreateSessionInit,
  copyInfo,
  newSessionInfo,
  patchSessionInfo,
  resolveClock,
  type SessionInfo,
  type SessionPatch,
  type StoreClock,
} from '../session-info.js'
import { encodeRecords } from './encode-records.js'
import { followStart } from './follow-start.js'
import { LeaseRegistry } from './leases.js'
import { checkListOptions, type ListSessionsOptions, pageSessions } from './list-options.js'
import {
  type FollowedRecord,
  type FollowOptions,
  type ReadBatchesOptions,
  readBatchSize,
  type SessionLease,
  type SessionStore,
} from './session-store.js'
import { Wakers } from './wakers.js'

/** Options of `createMemorySessionStore`. */
export interface MemorySessionStoreOptions extends StoreClock {
  /**
   * The largest encoded record accepted, in bytes (a positive integer; default: no limit). A
   * larger one fails its append with `record_too_large`, as a database store's does, so tests
   * meet the limit the production store will set.
   */
  maxRecordBytes?: number | undefined
}

interface MemorySession {
  info: SessionInfo
  /** Encoded lines, exactly as the file store writes them, so both stores round-trip alike. */
  lines: string[]
}

/**
 * A `SessionStore` that keeps everything in memory, for tests and short-lived hosts. It validates
 * and encodes records exactly like the file store, so what reads back is what a file would hold.
 */
export function createMemorySessionStore(options: MemorySessionStoreOptions = {}): SessionStore {
  const { now, createId } = resolveClock(options)
  const { maxRecordBytes } = options
  if (maxRecordBytes !== undefined && (!Number.isSafeInteger(maxRecordBytes) || maxRecordBytes < 1))
    throw new TypeError('maxRecordBytes must be a positive integer')
  const sessions = new Map<string, MemorySession>()
  const leases = new LeaseRegistry()
  const wakers = new Wakers()
  let closed = false

  const open = () => {
    if (closed) throw storeClosed()
  }
  const get = (sessionId: string): MemorySession => {
    open()
    assertSessionId(sessionId)
    const session = sessions.get(sessionId)
    if (!session) throw sessionNotFound(sessionId)
    return session
  }

  const write = (session: MemorySession, events: readonly HistoryEvent[]) => {
    if (events.length === 0) return
    const lines = encodeRecords(session.info.id, events, maxRecordBytes)
    for (const line of lines) session.lines.push(line)
    session.info = { ...session.info, recordCount: session.lines.length, updatedAt: now() }
    wakers.wake(session.info.id)
  }

  /** Follows appends made through this store (see `SessionStore.follow`). */
  async function* follow(sessionId: string, options: FollowOptions = {}): AsyncGenerator<FollowedRecord> {
    const { signal } = options
    let index = followStart(options.from)
    const session = get(sessionId)
    while (!closed && !signal?.aborted) {
      if (sessions.get(sessionId) !== session) throw sessionNotFound(sessionId)
      const line = session.lines[index]
      if (line !== undefined) yield { index: index++, record: decodeHistoryEvent(line) }
      else await wakers.next(sessionId, signal)
    }
  }

  /** Decodes the lines held when the read starts, a batch at a time (see `SessionStore.readBatches`). */
  async function* readBatches(
    sessionId: string,
    options?: ReadBatchesOptions,
  ): AsyncGenerator<HistoryEvent[]> {
    const batchSize = readBatchSize(options)
    const signal = options?.signal
    signal?.throwIfAborted()
    const { lines } = get(sessionId)
    const count = lines.length
    for (let from = 0; from < count; from += batchSize) {
      const batch = lines.slice(from, Math.min(count, from + batchSize)).map(decodeHistoryEvent)
      signal?.throwIfAborted()
      if (closed) throw storeClosed()
      yield batch
    }
  }

  return {
    ...(maxRecordBytes !== undefined ? { maxRecordBytes } : {}),
    async create(init: CreateSessionInit = {}) {
      open()
      const id = init.id ?? createId()
      assertSessionId(id)
      if (sessions.has(id)) {
        throw new SessionError('session_exists', `session ${id} already exists`, { sessionId: id })
      }
      const info = newSessionInfo(id, init, now())
      sessions.set(id, { info, lines: [] })
      return copyInfo(info)
    },
    async append(sessionId: string, events: readonly HistoryEvent[]) {
      const session = get(sessionId)
      leases.assertFree(sessionId)
      write(session, events)
    },
    async acquire(sessionId: string): Promise<SessionLease> {
      get(sessionId)
      const token = leases.take(sessionId)
      return {
        sessionId,
        async append(events) {
          leases.assertCurrent(sessionId, token)
          write(get(sessionId), events)
        },
        async release() {
          leases.give(sessionId, token)
        },
      }
    },
    async read(sessionId: string) {
      return get(sessionId).lines.map(decodeHistoryEvent)
    },
    readBatches,
    async info(sessionId: string) {
      open()
      assertSessionId(sessionId)
      const session = sessions.get(sessionId)
      return session ? copyInfo(session.info) : undefined
    },
    async update(sessionId: string, patch: SessionPatch) {
      const session = get(sessionId)
      session.info = patchSessionInfo(session.info, patch)
      return copyInfo(session.info)
    },
    async list(listOptions?: ListSessionsOptions) {
      const query = checkListOptions(listOptions)
      open()
      return pageSessions(
        [...sessions.values()].map((s) => s.info),
        query,
      ).map(copyInfo)
    },
    async delete(sessionId: string) {
      open()
      assertSessionId(sessionId)
      leases.assertFree(sessionId)
      sessions.delete(sessionId)
      wakers.wake(sessionId)
    },
    follow,
    async close() {
      closed = true
      leases.clear()
      wakers.wakeAll()
    },
  }
}
