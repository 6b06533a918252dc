import type { Dirent } from 'node:fs'
import { type FileHandle, readdir, rename, rm } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { HistoryEvent } from '@kode/protocol'
import {
  SessionError,
  type SessionErrorCode,
  SessionLockedError,
  sessionNotFound,
  storeClosed,
} from '../../errors.js'
import { mapLimited } from '../../map-limited.js'
import { assertSessionId, isValidSessionId } from '../../session-id.js'
import {
  assertSessionInit,
  type CreateSessionInit,
  resolveClock,
  type SessionInfo,
  type SessionPatch,
  type StoreClock,
} from '../../session-info.js'
import { encodeRecords } from '../encode-records.js'
import { LeaseRegistry } from '../leases.js'
import { checkListOptions, type ListSessionsOptions, pageSessions } from '../list-options.js'
import {
  type ReadBatchesOptions,
  readBatchSize,
  type SessionLease,
  type SessionStore,
  type StoreWarning,
} from '../session-store.js'
import { warningReporter } from '../warning-reporter.js'
import { countLines, endsWithWholeLine, readHistoryBatches, readHistoryFile } from './history-file.js'
import { type SessionPaths, sessionPaths } from './layout.js'
import type { HeldLock } from './lock.js'
import { makeDirectories } from './make-directories.js'
import { infoOf, readMetaFile } from './meta-file.js'
import { assertNotLink, openNoFollow, READ } from './no-follow.js'
import { SessionWriter, type WriterContext } from './session-writer.js'
import { syncDirectory } from './sync-directory.js'
import { removeTrash, trashPath } from './trash.js'

/**
 * The file store's own `readBatches` default, smaller than other stores' (`DEFAULT_READ_BATCH_SIZE`,
 * which also sets a database's page size): the records and events of a batch live until it is
 * handed on, and at 1,000 records V8 starts allocating them straight in the old generation
 * (allocation-site pretenuring) and recompiles the code that made them, wasted work for a reader
 * that forwards each batch and keeps nothing. At 250, forwarding a session's replay
 * (`replaySessionBatches`) took 10-17% less CPU, and a replay that keeps its events the same.
 */
export const FILE_READ_BATCH_SIZE = 250

/**
 * Sessions whose metadata `list()` reads at once. Each read holds a file open; libuv runs four file
 * operations at a time anyway, so more would only spend file descriptors.
 */
const LIST_READS = 16

/** Why no writer can open a session that `delete` still removes. */
const UNOPENABLE: ReadonlySet<SessionErrorCode> = new Set([
  'corrupt_metadata',
  'not_a_regular_file',
  'hard_link_refused',
])

/** Why a lease's writer stopped writing for good: every later append of that lease is refused. */
const LEASE_ENDING: ReadonlySet<SessionErrorCode> = new Set(['session_lease_lost', 'history_replaced'])

/** Options of `createFileSessionStore`. */
export interface FileSessionStoreOptions extends StoreClock {
  /** The directory holding one sub-directory per session; created when missing. */
  dir: string
  /** Told about data that was ignored or repaired (torn lines, stale locks, failed metadata writes). */
  onWarning?: ((warning: StoreWarning) => void) | undefined
  /**
   * Sync every append to disk before it resolves (default `true`). With `false`, an append that
   * resolved survives the process being killed but not a power loss or kernel crash.
   */
  fsync?: boolean | undefined
}

/**
 * The embedded default `SessionStore`: one directory per session under `dir`, holding an
 * append-only JSONL history (`history.jsonl`, one encoded `HistoryEvent` per line), its metadata
 * (`session.json`) and, while a writer has it, a lock file. One writer per session across
 * processes: a second one is refused with `SessionLockedError`; reading never takes the lock.
 */
export function createFileSessionStore(options: FileSessionStoreOptions): SessionStore {
  const root = resolve(options.dir)
  const { now, createId } = resolveClock(options)
  const fsync = options.fsync ?? true
  const warn = warningReporter(options.onWarning)
  const writers = new Map<string, Promise<SessionWriter>>()
  /** Sessions whose writer is still being opened or created (not yet in `writers` for good). */
  const opening = new Set<string>()
  /** Writers being closed after their lease was released; a new writer waits for its lock. */
  const closing = new Map<string, Promise<void>>()
  /** Sessions being deleted, each its removal (closing its writer): `close()` waits for them. */
  const deleting = new Map<string, Promise<void>>()
  const leases = new LeaseRegistry()
  /**
   * Sessions whose writer could not cut a failed append off: refused until a new store opens them
   * (whose writer truncates what the metadata says is past the records).
   */
  const broken = new Map<string, SessionError>()
  let closed = false
  /** What `close()` returns, once called. */
  let shutdown: Promise<void> | undefined

  const context = (sessionId: string): WriterContext => ({
    sessionId,
    paths: sessionPaths(root, sessionId),
    fsync,
    now,
    warn,
    broke: (error) => broken.set(sessionId, error),
    // The next call opens a new writer, which meets the lock of the process that holds it now, or
    // the history file that is there now.
    stopped: () => void letGo(sessionId),
  })
  const check = (sessionId: string) => {
    if (closed) throw storeClosed()
    assertSessionId(sessionId)
    const error = broken.get(sessionId)
    if (error) throw error
  }
  /**
   * Remembers a writer being opened (synchronously, so a concurrent call finds it), forgetting it
   * if opening fails so a later call retries.
   */
  const track = (sessionId: string, start: () => Promise<SessionWriter>) => {
    const settling = closing.get(sessionId)
    const promise = settling ? settling.catch(() => {}).then(start) : start()
    writers.set(sessionId, promise)
    opening.add(sessionId)
    promise.then(
      () => {
        if (writers.get(sessionId) === promise) opening.delete(sessionId)
      },
      () => {
        if (writers.get(sessionId) !== promise) return
        writers.delete(sessionId)
        opening.delete(sessionId)
      },
    )
    return promise
  }
  const writerOf = (sessionId: string) =>
    writers.get(sessionId) ?? track(sessionId, () => SessionWriter.open(context(sessionId)))
  /**
   * This store's own writer of the session, if it has one open and the session's files are still
   * its own. Once its history file was replaced (or another process took its lock), its length and
   * count describe a file that is not the session's any more: the session is read as another
   * process reads it.
   */
  const ownWriter = async (sessionId: string) => {
    const writer = await writers.get(sessionId)?.catch(() => undefined)
    return writer && (await writer.isCurrent()) ? writer : undefined
  }
  /** Closes the session's writer (its lock file goes), so other stores and processes may write. */
  const letGo = (sessionId: string) => {
    const writer = writers.get(sessionId)
    if (!writer) return Promise.resolve()
    writers.delete(sessionId)
    const done = writer.then(
      (w) => w.close(),
      () => {},
    )
    closing.set(sessionId, done)
    const forget = () => {
      if (closing.get(sessionId) === done) closing.delete(sessionId)
    }
    done.then(forget, forget)
    return done
  }

  /**
   * The paths of a session that exists, for reading it, and where its records end (`limit`): with
   * this store's own writer, at the acknowledged records (an append being written may still fail
   * and be cut off); else where a failed append that could not be cut off left bytes past them.
   */
  const readable = async (sessionId: string) => {
    check(sessionId)
    const paths = sessionPaths(root, sessionId)
    await assertNotLink(paths.dir, sessionId)
    const writer = await ownWriter(sessionId)
    if (writer) return { paths, limit: writer.acknowledgedLength() }
    const meta = await readMetaFile(paths.meta, sessionId)
    if (!meta) throw sessionNotFound(sessionId)
    return { paths, limit: meta.committedLength }
  }

  const info = async (sessionId: string) => {
    check(sessionId)
    const writer = await ownWriter(sessionId)
    return writer ? writer.info() : readInfo(sessionPaths(root, sessionId), sessionId)
  }

  return {
    info,

    async create(init: CreateSessionInit = {}) {
      const sessionId = init.id ?? createId()
      check(sessionId)
      // Before anything is made on disk.
      assertSessionInit(init, sessionId)
      // Another call of this store is opening or creating the session right now: it wins.
      if (opening.has(sessionId)) {
        throw new SessionLockedError(sessionId, undefined, undefined, 'this-store')
      }
      if (writers.has(sessionId)) {
        throw new SessionError('session_exists', `session ${sessionId} already exists`, { sessionId })
      }
      const writer = await track(sessionId, async () => {
        await makeDirectories(root)
        return SessionWriter.create(context(sessionId), init)
      })
      return writer.info()
    },

    async acquire(sessionId: string): Promise<SessionLease> {
      check(sessionId)
      const token = leases.take(sessionId)
      try {
        await writerOf(sessionId)
      } catch (error) {
        leases.give(sessionId, token)
        throw error
      }
      // Once another process took the session over, this lease stays lost: a new writer would
      // append after records its holder never saw. So once the history file was replaced: the
      // refused records are missing from it, and a new writer would append after the gap.
      let lost: SessionError | undefined
      return {
        sessionId,
        async append(events) {
          leases.assertCurrent(sessionId, token)
          if (lost) throw lost
          const lines = encodeRecords(sessionId, events)
          if (lines.length === 0) return
          const writer = await writerOf(sessionId)
          try {
            await writer.append(lines)
          } catch (error) {
            // What later appends are refused with: they write nothing (this one may have).
            if (SessionError.is(error) && LEASE_ENDING.has(error.code)) lost = writer.stopReason() ?? error
            throw error
          }
        },
        async release() {
          if (leases.give(sessionId, token) && !closed) await letGo(sessionId)
        },
      }
    },

    async append(sessionId: string, events: readonly HistoryEvent[]) {
      check(sessionId)
      leases.assertFree(sessionId)
      const lines = encodeRecords(sessionId, events)
      if (lines.length === 0) {
        if (!(await info(sessionId))) throw sessionNotFound(sessionId)
        return
      }
      await (await writerOf(sessionId)).append(lines)
    },

    async read(sessionId: string) {
      const { paths, limit } = await readable(sessionId)
      const { events, torn } = await readHistoryFile(paths.history, sessionId, limit)
      if (torn) warn({ type: 'torn_tail', sessionId, file: paths.history, ...torn })
      return events
    },

    async *readBatches(sessionId: string, options?: ReadBatchesOptions) {
      const batchSize = readBatchSize(options, FILE_READ_BATCH_SIZE)
      const signal = options?.signal
      signal?.throwIfAborted()
      const { paths, limit } = await readable(sessionId)
      const batches = readHistoryBatches(paths.history, sessionId, {
        batchSize,
        signal,
        limit,
        onTorn: (torn) => warn({ type: 'torn_tail', sessionId, file: paths.history, ...torn }),
      })
      for await (const batch of batches) {
        if (closed) throw storeClosed()
        yield batch
      }
    },

    async update(sessionId: string, patch: SessionPatch) {
      check(sessionId)
      return (await writerOf(sessionId)).update(patch)
    },

    async list(listOptions?: ListSessionsOptions) {
      const query = checkListOptions(listOptions)
      if (closed) throw storeClosed()
      let entries: Dirent[]
      try {
        entries = await readdir(root, { withFileTypes: true })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
        throw error
      }
      // Alongside the sessions: what deletes cut short by a crash left (see `trash.ts`).
      const sweeping = removeTrash(root, entries)
      // A link where a session directory belongs is refused by `info` (`symlink_refused`): listed
      // as unreadable, so the session is named rather than silently missing.
      const sessions = entries.filter(
        (entry) => (entry.isDirectory() || entry.isSymbolicLink()) && isValidSessionId(entry.name),
      )
      const infos = await mapLimited(sessions, LIST_READS, async (entry) => {
        try {
          return await info(entry.name)
        } catch (error) {
          // Out of file descriptors is this process's state, not the session's: no reason to skip it.
          const code = (error as NodeJS.ErrnoException).code
          if (code === 'EMFILE' || code === 'ENFILE') throw error
          const file = sessionPaths(root, entry.name).meta
          warn({ type: 'unreadable_session', sessionId: entry.name, file, error })
          return undefined
        }
      })
      await sweeping
      // Every session's metadata is read either way: the directory holds no index to page by.
      return pageSessions(
        infos.filter((info): info is SessionInfo => info !== undefined),
        query,
      )
    },

    async delete(sessionId: string) {
      check(sessionId)
      leases.assertFree(sessionId)
      // `close()` waits for the removal instead of closing its writer under it.
      const removal = removeSession(sessionId)
      const settled = removal.catch(() => {})
      const earlier = deleting.get(sessionId)
      const all = earlier ? Promise.all([earlier, settled]).then(() => {}) : settled
      deleting.set(sessionId, all)
      void all.then(() => {
        if (deleting.get(sessionId) === all) deleting.delete(sessionId)
      })
      await removal
    },

    close() {
      // A second call waits for the first: its caller may exit once it resolves.
      shutdown ??= closeAll()
      return shutdown
    },
  }

  /** Closes every writer (final metadata, locks given back) once pending writes and deletes end. */
  async function closeAll(): Promise<void> {
    closed = true
    leases.clear()
    const results = await Promise.allSettled([
      ...[...writers]
        .filter(([sessionId]) => !deleting.has(sessionId))
        .map(async ([, opening]) => {
          const writer = await opening.catch(() => undefined)
          await writer?.close()
        }),
      ...closing.values(),
      ...deleting.values(),
    ])
    writers.clear()
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason
  }

  /** Closes the session's writer (or, without one, takes its lock) and removes its directory. */
  async function removeSession(sessionId: string): Promise<void> {
    let writer: SessionWriter | undefined
    try {
      writer = await writerOf(sessionId)
    } catch (error) {
      if (SessionError.is(error) && error.code === 'session_not_found') return
      // Deleting is how a user gets rid of a session whose metadata cannot be read, or whose
      // files are not files (or have other names, which removing this one leaves alone): no
      // writer can open it, so its lock is taken alone.
      if (!(SessionError.is(error) && UNOPENABLE.has(error.code))) throw error
    }
    let lock: HeldLock
    if (writer) {
      lock = await writer.closeForDelete()
      writers.delete(sessionId)
    } else lock = await SessionWriter.lockUnreadable(context(sessionId))
    // Renamed away first, so the session disappears at once even if removing its files is slow.
    const trash = trashPath(root, sessionId)
    try {
      await rename(sessionPaths(root, sessionId).dir, trash)
    } catch (error) {
      await lock.release()
      throw error
    }
    try {
      // Until the store's directory is synced, a power loss can undo the rename: the session back.
      if (fsync) await syncDirectory(root)
    } finally {
      await rm(trash, { recursive: true, force: true })
    }
  }
}

/**
 * Reads a session's metadata as another process sees it. The writer rewrites metadata in the
 * background, so it may trail the history: records past the byte count it accounts for are
 * counted from the file, and the file's modification time stands in for `updatedAt`.
 */
async function readInfo(paths: SessionPaths, sessionId: string): Promise<SessionInfo | undefined> {
  await assertNotLink(paths.dir, sessionId)
  const meta = await readMetaFile(paths.meta, sessionId)
  if (!meta) return undefined
  const { info, byteLength, committedLength } = infoOf(meta)
  let handle: FileHandle
  try {
    handle = await openNoFollow(paths.history, READ, sessionId)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return info
    throw error
  }
  try {
    const stat = await handle.stat()
    const { mtimeMs } = stat
    // Bytes past `committedLength` are a failed append's, not records.
    const size = Math.min(stat.size, committedLength ?? stat.size)
    if (size === byteLength) return info
    // A whole last line without its newline (written elsewhere) is read as a record: counted too.
    const unterminated = (await endsWithWholeLine(handle, size)) ? 1 : 0
    const recordCount =
      unterminated +
      (size > byteLength
        ? info.recordCount + (await countLines(handle, byteLength, size))
        : await countLines(handle, 0, size))
    if (recordCount === info.recordCount) return info
    return { ...info, recordCount, updatedAt: Math.max(info.updatedAt, mtimeMs) }
  } finally {
    await handle.close()
  }
}
