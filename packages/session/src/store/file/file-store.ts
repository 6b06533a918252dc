import { randomUUID } from 'node:crypto'
import type { Dirent } from 'node:fs'
import { type FileHandle, mkdir, open, readdir, rename, rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { HistoryEvent } from '@kode/protocol'
import { SessionError, sessionNotFound, storeClosed } from '../../errors.js'
import { assertSessionId, isValidSessionId } from '../../session-id.js'
import {
  type CreateSessionInit,
  resolveClock,
  type SessionInfo,
  type SessionPatch,
  type StoreClock,
  sortNewestFirst,
} from '../../session-info.js'
import { encodeRecords } from '../encode-records.js'
import type { SessionStore, StoreWarning } from '../session-store.js'
import { countLines, readHistoryFile } from './history-file.js'
import { type SessionPaths, sessionPaths } from './layout.js'
import { infoOf, readMetaFile } from './meta-file.js'
import { SessionWriter, type WriterContext } from './session-writer.js'

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
  const warn = options.onWarning ?? (() => {})
  const writers = new Map<string, Promise<SessionWriter>>()
  /** Writers being released: a new writer of the session waits for the old one to let go. */
  const releasing = new Map<string, Promise<void>>()
  const exitHook = new ExitHook()
  let closed = false

  const context = (sessionId: string): WriterContext => ({
    sessionId,
    paths: sessionPaths(root, sessionId),
    fsync,
    now,
    warn,
  })
  const check = (sessionId: string) => {
    if (closed) throw storeClosed()
    assertSessionId(sessionId)
  }
  /** Remembers a writer being opened, forgetting it if opening fails so a later call retries. */
  const track = (sessionId: string, opening: Promise<SessionWriter>) => {
    writers.set(sessionId, opening)
    opening.then(
      (writer) => exitHook.add(writer),
      () => {
        if (writers.get(sessionId) === opening) writers.delete(sessionId)
      },
    )
    return opening
  }
  const afterRelease = (sessionId: string) => releasing.get(sessionId) ?? Promise.resolve()
  const writerOf = (sessionId: string) =>
    writers.get(sessionId) ??
    track(
      sessionId,
      afterRelease(sessionId).then(() => SessionWriter.open(context(sessionId))),
    )
  /** Closes a writer and forgets it. */
  const closeWriter = async (writer: SessionWriter) => {
    try {
      await writer.close()
    } finally {
      exitHook.delete(writer)
    }
  }
  /** This store's own writer of the session, if it has one open. */
  const ownWriter = async (sessionId: string) => {
    const opening = writers.get(sessionId)
    return opening ? opening.catch(() => undefined) : undefined
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
      if (writers.has(sessionId)) {
        throw new SessionError('session_exists', `session ${sessionId} already exists`, { sessionId })
      }
      await mkdir(root, { recursive: true })
      const writer = await track(
        sessionId,
        afterRelease(sessionId).then(() => SessionWriter.create(context(sessionId), init)),
      )
      return writer.info()
    },

    async append(sessionId: string, events: readonly HistoryEvent[]) {
      check(sessionId)
      const lines = encodeRecords(sessionId, events)
      if (lines.length === 0) {
        if (!(await info(sessionId))) throw sessionNotFound(sessionId)
        return
      }
      await (await writerOf(sessionId)).append(lines)
    },

    async read(sessionId: string) {
      check(sessionId)
      const paths = sessionPaths(root, sessionId)
      if (!(await ownWriter(sessionId)) && !(await readMetaFile(paths.meta, sessionId))) {
        throw sessionNotFound(sessionId)
      }
      const { events, torn } = await readHistoryFile(paths.history, sessionId)
      if (torn) warn({ type: 'torn_tail', sessionId, file: paths.history, ...torn })
      return events
    },

    async update(sessionId: string, patch: SessionPatch) {
      check(sessionId)
      return (await writerOf(sessionId)).update(patch)
    },

    async list() {
      if (closed) throw storeClosed()
      let entries: Dirent[]
      try {
        entries = await readdir(root, { withFileTypes: true })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
        throw error
      }
      const infos = await Promise.all(
        entries
          .filter((entry) => entry.isDirectory() && isValidSessionId(entry.name))
          .map(async (entry) => {
            try {
              return await info(entry.name)
            } catch (error) {
              const file = sessionPaths(root, entry.name).meta
              warn({ type: 'unreadable_session', sessionId: entry.name, file, error })
              return undefined
            }
          }),
      )
      return sortNewestFirst(infos.filter((info): info is SessionInfo => info !== undefined))
    },

    async delete(sessionId: string) {
      check(sessionId)
      let writer: SessionWriter
      try {
        writer = await writerOf(sessionId)
      } catch (error) {
        if (SessionError.is(error) && error.code === 'session_not_found') return
        throw error
      }
      const lock = await writer.closeForDelete()
      writers.delete(sessionId)
      exitHook.delete(writer)
      // Renamed away first, so the session disappears at once even if removing its files is slow.
      const trash = join(root, `.deleted-${sessionId}-${randomUUID()}`)
      try {
        await rename(sessionPaths(root, sessionId).dir, trash)
      } catch (error) {
        await lock.release()
        throw error
      }
      await rm(trash, { recursive: true, force: true })
    },

    async release(sessionId: string) {
      check(sessionId)
      const opening = writers.get(sessionId)
      if (!opening) return afterRelease(sessionId)
      writers.delete(sessionId)
      const done = opening.then(closeWriter, () => {})
      const settled = done.catch(() => {})
      releasing.set(sessionId, settled)
      try {
        await done
      } finally {
        if (releasing.get(sessionId) === settled) releasing.delete(sessionId)
      }
    },

    async close() {
      if (closed) return
      closed = true
      const results = await Promise.allSettled(
        [...writers.values()].map(async (opening) => {
          const writer = await opening.catch(() => undefined)
          if (writer) await closeWriter(writer)
        }),
      )
      writers.clear()
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
      if (failed) throw failed.reason
    },
  }
}

/**
 * Reads a session's metadata as another process sees it. The writer rewrites metadata in the
 * background, so it may trail the history: records past the byte count it accounts for are
 * counted from the file, and the file's modification time stands in for `updatedAt`.
 */
async function readInfo(paths: SessionPaths, sessionId: string): Promise<SessionInfo | undefined> {
  const meta = await readMetaFile(paths.meta, sessionId)
  if (!meta) return undefined
  const { info, byteLength } = infoOf(meta)
  let handle: FileHandle
  try {
    handle = await open(paths.history, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return info
    throw error
  }
  try {
    const { size, mtimeMs } = await handle.stat()
    if (size === byteLength) return info
    const recordCount =
      size > byteLength
        ? info.recordCount + (await countLines(handle, byteLength, size))
        : await countLines(handle, 0, size)
    if (recordCount === info.recordCount) return info
    return { ...info, recordCount, updatedAt: Math.max(info.updatedAt, mtimeMs) }
  } finally {
    await handle.close()
  }
}

/**
 * Removes the lock files of the writers still open when the process exits (a host that never
 * closed its store or agent), so a clean exit leaves no `writer.lock` behind. Listens to the
 * process's `exit` only while this store has a writer open.
 */
class ExitHook {
  private readonly open = new Set<SessionWriter>()
  private readonly onExit = () => {
    for (const writer of this.open) writer.releaseLockOnExit()
  }

  add(writer: SessionWriter): void {
    if (this.open.size === 0) process.on('exit', this.onExit)
    this.open.add(writer)
  }

  delete(writer: SessionWriter): void {
    if (!this.open.delete(writer)) return
    if (this.open.size === 0) process.off('exit', this.onExit)
  }
}
