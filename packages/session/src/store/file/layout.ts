import { join } from 'node:path'

/** Where one session's files live inside the store directory: one directory per session. */
export interface SessionPaths {
  dir: string
  /** The append-only history, one encoded `HistoryEvent` per line. */
  history: string
  /** `SessionInfo` plus bookkeeping, replaced atomically (write a temp file, rename). */
  meta: string
  /** Present while a writer holds the session. */
  lock: string
}

/** File names inside a session directory. */
export const HISTORY_FILE = 'history.jsonl'
export const META_FILE = 'session.json'
export const LOCK_FILE = 'writer.lock'

/** The paths of session `sessionId` (already validated) under the store directory `root`. */
export function sessionPaths(root: string, sessionId: string): SessionPaths {
  const dir = join(root, sessionId)
  return { dir, history: join(dir, HISTORY_FILE), meta: join(dir, META_FILE), lock: join(dir, LOCK_FILE) }
}
