import { type FileHandle, lstat, mkdir, rmdir, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { historyReplaced, SessionError, sessionBroken, sessionNotFound } from '../../errors.js'
import {
  type CreateSessionInit,
  copyInfo,
  newSessionInfo,
  patchSessionInfo,
  type SessionInfo,
  type SessionPatch,
} from '../../session-info.js'
import type { StoreWarning } from '../session-store.js'
import { CoalescingWriter } from './coalescing-writer.js'
import { type FileIdentity, identityOf, isSameFile } from './file-identity.js'
import { completeLength, countLines, endsWithWholeLine } from './history-file.js'
import type { SessionPaths } from './layout.js'
import { acquireLock, type HeldLock } from './lock.js'
import { infoOf, metaOf, readMetaFile, removeTemp, writeMetaFile } from './meta-file.js'
import { APPEND, assertNotLink, openNoFollow } from './no-follow.js'
import { syncDirectory } from './sync-directory.js'

/** What a writer needs from its store. */
export interface WriterContext {
  sessionId: string
  paths: SessionPaths
  fsync: boolean
  now: () => number
  warn: (warning: StoreWarning) => void
  /** Told once when a failed append cannot be cut off (see `SessionWriter.append`). */
  broke: (error: SessionError) => void
  /**
   * Told once when the writer stops writing before it is closed: it found its lock taken over, or
   * its history file replaced (see `SessionWriter.append`).
   */
  stopped: () => void
}

/**
 * History bytes appended since the metadata file was last written after which an append rewrites
 * it. Readers in other processes count the lines past the metadata's `byteLength` (see
 * `readInfo`), so this bounds their extra reading, while appends in between cost no metadata I/O.
 */
export const META_REWRITE_BYTES = 1 << 20

/**
 * The one writer of a session in this process: holds the session's lock and an append handle,
 * and applies appends in call order. History is the source of truth: `recordCount` and
 * `updatedAt` can be derived from it, so an append does not rewrite the metadata file. That
 * happens when the metadata changes (create, `update`), when a reopened session's metadata is
 * behind its history, once `META_REWRITE_BYTES` of history have accumulated (in the background),
 * and on close.
 */
export class SessionWriter {
  private queue: Promise<unknown> = Promise.resolve()
  private readonly meta: CoalescingWriter
  /** Bytes of the history file that hold complete, acknowledged records. */
  private byteLength: number
  /** The `byteLength` the metadata file on disk accounts for. */
  private metaByteLength: number
  /** Set while the last metadata write failed: the next append retries it. */
  private metaFailed = false
  /** Set when a write failed part-way: the file may hold bytes past `byteLength`. */
  private needsRepair = false
  /**
   * Set when the bytes a failed write left could not be cut off: the file holds lines of a batch
   * that was never acknowledged, so every later operation is refused with it.
   */
  private broken: SessionError | undefined
  /** Whether session.json on disk says where the records end (`committedLength`) while broken. */
  private fenced = false
  /**
   * Set when the lock file is no longer this writer's: another process holds the session, so
   * nothing is written any more (no record, no repair, no metadata) and the lock is not touched.
   */
  private lost: SessionError | undefined
  /**
   * Set when the history's path no longer names the file this writer holds open (replaced by a
   * rename, removed, a link in its place): what it wrote would reach no reader, so nothing is
   * written any more. The lock is still its own, and is given back on close.
   */
  private replaced: SessionError | undefined
  private closed = false

  private constructor(
    private readonly ctx: WriterContext,
    private readonly handle: FileHandle,
    /** The history file `handle` is, as opened: the path must still name it to be written. */
    private readonly identity: FileIdentity,
    private readonly lock: HeldLock,
    private state: SessionInfo,
    byteLength: number,
    metaByteLength: number,
  ) {
    this.byteLength = byteLength
    this.metaByteLength = metaByteLength
    this.meta = new CoalescingWriter(
      async () => {
        await this.assertWritable()
        const written = this.byteLength
        const broken = this.broken !== undefined
        await writeMetaFile(
          ctx.paths.meta,
          metaTemp(ctx),
          metaOf(this.state, written, broken),
          ctx.sessionId,
          ctx.fsync,
        )
        this.metaByteLength = written
        this.metaFailed = false
        this.fenced = broken
      },
      (error) => {
        this.metaFailed = true
        ctx.warn({ type: 'metadata_write_failed', sessionId: ctx.sessionId, file: ctx.paths.meta, error })
      },
    )
  }

  /** Opens an existing session for writing. Fails with `session_not_found` or `session_locked`. */
  static async open(ctx: WriterContext): Promise<SessionWriter> {
    await assertNotLink(ctx.paths.dir, ctx.sessionId)
    const lock = await takeLock(ctx)
    try {
      const meta = await readMetaFile(ctx.paths.meta, ctx.sessionId)
      if (!meta) throw sessionNotFound(ctx.sessionId)
      const { info, byteLength, committedLength } = infoOf(meta)
      return await SessionWriter.start(ctx, lock, info, byteLength, committedLength)
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  /**
   * Takes the lock of a session no writer can open (its metadata is corrupt), so the caller can
   * remove the session without another writer slipping in. Fails with `session_locked`.
   */
  static async lockUnreadable(ctx: WriterContext): Promise<HeldLock> {
    await assertNotLink(ctx.paths.dir, ctx.sessionId)
    return takeLock(ctx)
  }

  /** Creates a session's directory and files and opens it for writing. */
  static async create(ctx: WriterContext, init: CreateSessionInit): Promise<SessionWriter> {
    let made = false
    try {
      await mkdir(ctx.paths.dir)
      made = true
    } catch (error) {
      // An existing directory without metadata is a create that crashed half-way: take it over.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    await assertNotLink(ctx.paths.dir, ctx.sessionId)
    if (!made && !(await lstat(ctx.paths.dir)).isDirectory()) {
      // A file has the session's name: the id is taken, though by no session.
      throw new SessionError(
        'session_exists',
        `session ${ctx.sessionId} cannot be created: ${ctx.paths.dir} exists and is not a directory`,
        { sessionId: ctx.sessionId },
      )
    }
    let lock: HeldLock
    try {
      lock = await takeLock(ctx)
    } catch (error) {
      if (made) await removeDirectory(ctx)
      throw error
    }
    try {
      if (await readMetaFile(ctx.paths.meta, ctx.sessionId)) {
        throw new SessionError('session_exists', `session ${ctx.sessionId} already exists`, {
          sessionId: ctx.sessionId,
        })
      }
    } catch (error) {
      // Another create took the directory we made before we took the lock, and made the session
      // in it: its files, which must stay.
      await lock.release()
      throw error
    }
    try {
      const writer = await SessionWriter.start(ctx, lock, newSessionInfo(ctx.sessionId, init, ctx.now()), 0)
      try {
        await writer.meta.flush()
      } catch (error) {
        // The writer is never handed out, so nothing else would close its history file.
        await writer.handle.close()
        throw error
      }
      // The session's own entries are synced with its metadata (`writeMetaFile`); its entry in the
      // store's directory is durable only once that directory is synced too.
      if (ctx.fsync) await syncDirectory(dirname(ctx.paths.dir))
      return writer
    } catch (error) {
      // A create that failed (a full disk) leaves no session, nor a directory that lists as
      // nothing for ever. Our files go while we hold the lock, so they are never another writer's.
      if (made) {
        await unlink(ctx.paths.meta).catch(() => {})
        await unlink(ctx.paths.history).catch(() => {})
      }
      await lock.release()
      if (made) await removeDirectory(ctx)
      throw error
    }
  }

  /**
   * Opens the history for appending, cuts off what a failed append left (`committed`: where the
   * records end, when the metadata says so) and a torn tail, and reconciles the metadata with it.
   */
  private static async start(
    ctx: WriterContext,
    lock: HeldLock,
    info: SessionInfo,
    byteLength: number,
    committed?: number,
  ): Promise<SessionWriter> {
    const handle = await openNoFollow(ctx.paths.history, APPEND, ctx.sessionId)
    try {
      // A temp file left by a metadata write that a crash interrupted; we hold the lock now.
      await removeTemp(metaTemp(ctx), ctx.sessionId)
      const identity = identityOf(await handle.stat({ bigint: true }))
      let { size, mtimeMs } = await handle.stat()
      if (committed !== undefined && size > committed) {
        await cutHistory(ctx, handle, size, committed, 'failed_append_repaired')
        ;({ size, mtimeMs } = await handle.stat())
      }
      let complete = await completeLength(handle, size)
      if (complete < size) {
        // A whole line without its newline (written elsewhere) is kept: its line is ended.
        if (await endsWithWholeLine(handle, size, complete)) complete = await endLine(ctx, handle, size)
        else await cutHistory(ctx, handle, size, complete, 'torn_tail_repaired')
      }
      const writer = new SessionWriter(ctx, handle, identity, lock, info, complete, byteLength)
      // The metadata's `committedLength` is dropped once the bytes past it are gone.
      if (complete !== byteLength || committed !== undefined) {
        // The metadata missed appends (a crash between the history write and its update).
        const counted =
          complete > byteLength
            ? info.recordCount + (await countLines(handle, byteLength, complete))
            : await countLines(handle, 0, complete)
        writer.state = { ...info, recordCount: counted, updatedAt: Math.max(info.updatedAt, mtimeMs) }
        await writer.meta.flush()
      }
      return writer
    } catch (error) {
      await handle.close()
      throw error
    }
  }

  /**
   * Where the acknowledged records end. Bytes past it belong to an append still being written
   * (which may yet fail and be cut off), so this store's reads stop here.
   */
  acknowledgedLength(): number {
    return this.byteLength
  }

  /**
   * Whether the session's files are still this writer's: its lock file its own, and the history's
   * path the file it holds open (see `findStop`). Only looks: the writer itself finds out at its
   * next write, and tells that call's caller.
   */
  async isCurrent(): Promise<boolean> {
    if (this.lost || this.replaced) return false
    const [held, same] = await Promise.all([
      this.lock.held(),
      isSameFile(this.ctx.paths.history, this.identity),
    ])
    return held && same
  }

  /** Why this writer stopped writing before it was closed (`session_lease_lost`, `history_replaced`). */
  stopReason(): SessionError | undefined {
    return this.lost ?? this.replaced
  }

  /** The session's current metadata. */
  info(): SessionInfo {
    return copyInfo(this.state)
  }

  /**
   * Appends encoded lines as one write; resolves once they are written (and synced). Refused
   * without writing once the lock is another's (`session_lease_lost`) or the history's path names
   * another file than the one open (`history_replaced`), and from then on.
   */
  append(lines: readonly string[]): Promise<void> {
    return this.enqueue(async () => {
      // Before anything touches the file: another writer's records may follow ours now, or the
      // file may be one no path reaches any more.
      await this.assertWritable()
      if (this.needsRepair) await this.repair()
      const data = Buffer.from(`${lines.join('\n')}\n`, 'utf8')
      try {
        for (let offset = 0; offset < data.length; ) {
          const { bytesWritten } = await this.handle.write(data, offset)
          offset += bytesWritten
        }
        if (this.ctx.fsync) await this.handle.datasync()
      } catch (error) {
        await this.cutFailedAppend()
        throw error
      }
      await this.assertLanded()
      this.byteLength += data.length
      this.state = {
        ...this.state,
        recordCount: this.state.recordCount + lines.length,
        updatedAt: this.ctx.now(),
      }
      if (this.metaFailed || this.byteLength - this.metaByteLength >= META_REWRITE_BYTES) {
        this.meta.request()
      }
    })
  }

  /**
   * After an append's write: throws `history_replaced` when the history's path no longer names the
   * file written (a replacement that landed after the check before the write), so an append whose
   * records no reader of the session will find is never acknowledged. Those bytes are left in the
   * old file, which is no longer the session's: nothing more is written to it. When the path
   * cannot be looked at, it is not known where the records went: they are cut off, as after a
   * failed write, and the error thrown.
   */
  private async assertLanded(): Promise<void> {
    let same: boolean
    try {
      same = await isSameFile(this.ctx.paths.history, this.identity)
    } catch (error) {
      await this.cutFailedAppend()
      throw error
    }
    if (same) return
    // Later calls are refused as after a replacement found before the write: they wrote nothing.
    // The store is told once (a metadata write may have found it meanwhile): told again, it would
    // let go of the writer it opened since.
    if (!this.lost && !this.replaced) {
      this.replaced = historyReplaced(this.ctx.sessionId, this.ctx.paths.history)
      this.ctx.stopped()
    }
    throw historyReplaced(this.ctx.sessionId, this.ctx.paths.history, true)
  }

  /**
   * A failed write (a full disk) may have left part of the batch on disk: cut it off now, so no
   * reader (in this process or another) ever sees records of a failed append.
   */
  private async cutFailedAppend(): Promise<void> {
    this.needsRepair = true
    await this.repair().catch((cause: unknown) => this.break(cause))
  }

  /**
   * Applies a metadata patch; resolves once the metadata file holds it. A patch that could not be
   * written is dropped, so a rejected `update` changes nothing, now or at a later write.
   */
  update(patch: SessionPatch): Promise<SessionInfo> {
    return this.enqueue(async () => {
      await this.assertWritable()
      const before = this.state
      this.state = patchSessionInfo(before, patch)
      try {
        await this.meta.flush()
      } catch (error) {
        this.state = before
        throw error
      }
      return this.info()
    })
  }

  /**
   * Waits for queued appends, writes the final metadata, closes the file and releases the lock. A
   * broken writer tries once more to cut the failed append off; when it cannot, it rejects with
   * `session_broken`, and keeps the lock file unless the metadata says where the records end (so no
   * writer appends after the failed batch as if it were history).
   */
  close(): Promise<void> {
    return this.shutdown(async () => {
      // Another process holds the session: its metadata, its records (no repair) and its lock are
      // its own. The caller is letting this writer go already, so it is not told (`stopped`).
      await this.findStop().catch(() => {})
      if (this.lost) {
        await this.handle.close()
        return
      }
      if (this.replaced) {
        // The metadata would describe a file no path reaches; the next writer counts the file
        // there now. The lock is still ours.
        try {
          await this.meta.settle()
          await this.handle.close()
        } finally {
          await this.lock.release()
        }
        return
      }
      let keepLock = false
      try {
        if (this.needsRepair) {
          try {
            await this.repair()
            this.broken = undefined
          } catch (error) {
            if (!this.broken) throw error
            if (!this.fenced) await this.meta.flush().catch(() => {})
            keepLock = !this.fenced
            throw this.broken
          }
        }
        await this.meta.settle()
        await this.meta.flush()
      } finally {
        await this.handle.close()
        if (!keepLock) await this.lock.release()
      }
    })
  }

  /**
   * Waits for queued appends and closes the file but keeps the lock, so the caller can remove the
   * session directory (lock file included) without another writer slipping in. Returns the lock
   * for the caller to release if the removal fails.
   */
  async closeForDelete(): Promise<HeldLock> {
    await this.shutdown(async () => {
      await this.meta.settle()
      await this.handle.close()
    })
    return this.lock
  }

  private shutdown(final: () => Promise<void>): Promise<void> {
    if (this.closed) {
      return Promise.reject(
        new SessionError('store_closed', `session ${this.ctx.sessionId} is already closed`, {
          sessionId: this.ctx.sessionId,
        }),
      )
    }
    this.closed = true
    const done = this.queue.then(final)
    this.queue = done.catch(() => {})
    return done
  }

  /**
   * Throws `session_lease_lost` once the lock file is not this writer's any more, and
   * `history_replaced` once the history's path no longer names the file it holds open; the store
   * is told (`stopped`) the first time. A live writer's lock is only ever moved by another process
   * that judged it stale in a race (see `HeldLock.held`), so that two processes never both append
   * to the session. A history file is replaced by hand (`mv`, an editor saving through a temp
   * file), and appends to the old one would resolve and be lost.
   */
  private async assertWritable(): Promise<void> {
    if (await this.findStop()) this.ctx.stopped()
    const stop = this.lost ?? this.replaced
    if (stop) throw stop
  }

  /**
   * Looks at the lock file and the history's path, and records why this writer must stop writing,
   * if it must; true when that was found just now. One `lstat` each, run at once in the file-system
   * thread pool: where an `lstat` waits on a disk or a network, an append waits for the slower of
   * the two rather than both in turn.
   */
  private async findStop(): Promise<boolean> {
    if (this.lost || this.replaced) return false
    const [held, same] = await Promise.all([
      this.lock.held(),
      isSameFile(this.ctx.paths.history, this.identity),
    ])
    if ((held && same) || this.lost || this.replaced) return false
    if (!held) {
      this.lost = new SessionError(
        'session_lease_lost',
        `session ${this.ctx.sessionId}: another process took the session over (its lock file ${this.ctx.paths.lock} is no longer this writer's); nothing more is written by this one`,
        { sessionId: this.ctx.sessionId },
      )
    } else this.replaced = historyReplaced(this.ctx.sessionId, this.ctx.paths.history)
    return true
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    if (this.broken) return Promise.reject(this.broken)
    if (this.closed) {
      return Promise.reject(
        new SessionError('store_closed', `session ${this.ctx.sessionId} is closed for writing`, {
          sessionId: this.ctx.sessionId,
        }),
      )
    }
    const run = this.queue.then(() => {
      // An operation queued behind the append that broke the writer must not run either.
      if (this.broken) throw this.broken
      return task()
    })
    this.queue = run.catch(() => {})
    return run
  }

  /**
   * A failed append's bytes could not be cut off: refuse everything from now on, and try to say in
   * the metadata where the records end, for readers elsewhere and the next writer.
   */
  private async break(cause: unknown): Promise<void> {
    this.broken = sessionBroken(this.ctx.sessionId, cause, this.ctx.paths.history, this.byteLength)
    this.ctx.broke(this.broken)
    await this.meta.flush().catch(() => {})
  }

  /** Drops bytes a failed write left past the last acknowledged record. */
  private async repair(): Promise<void> {
    const { size } = await this.handle.stat()
    if (size > this.byteLength) {
      await this.handle.truncate(this.byteLength)
      if (this.ctx.fsync) await this.handle.datasync()
    }
    this.needsRepair = false
  }
}

/**
 * Removes the directory a failed create made, if it is empty: once the lock is given back, another
 * create may have taken the directory over (its lock file is in it), and it is left to that one.
 */
async function removeDirectory(ctx: WriterContext): Promise<void> {
  await rmdir(ctx.paths.dir).catch(() => {})
}

function metaTemp(ctx: WriterContext): string {
  return `${ctx.paths.meta}.tmp`
}

function takeLock(ctx: WriterContext): Promise<HeldLock> {
  // Wall-clock time on purpose: the lock is read by other processes, not by the session's clock.
  return acquireLock(ctx.paths.lock, ctx.sessionId, Date.now(), (holder) =>
    ctx.warn({ type: 'stale_lock_removed', sessionId: ctx.sessionId, file: ctx.paths.lock, pid: holder.pid }),
  )
}

/** Ends the last line of a history of `size` bytes with its newline; returns the new length. */
async function endLine(ctx: WriterContext, handle: FileHandle, size: number): Promise<number> {
  await handle.write(Buffer.from('\n'))
  if (ctx.fsync) await handle.datasync()
  return size + 1
}

/** Truncates the history from `size` to `length` bytes and tells the store's `warn` why. */
async function cutHistory(
  ctx: WriterContext,
  handle: FileHandle,
  size: number,
  length: number,
  type: 'failed_append_repaired' | 'torn_tail_repaired',
): Promise<void> {
  await handle.truncate(length)
  if (ctx.fsync) await handle.datasync()
  ctx.warn({ type, sessionId: ctx.sessionId, file: ctx.paths.history, bytes: size - length })
}
