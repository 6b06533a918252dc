import { randomUUID } from 'node:crypto'
import type { Dirent } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { mapLimited } from '../../map-limited.js'
import { isValidSessionId } from '../../session-id.js'

// `delete` renames a session's directory to a trash name, then removes it: the session is gone at
// once even when removing its files is slow. A crash in between leaves the renamed directory,
// which `list` removes later. Only names `delete` makes are touched: `.deleted-<id>-<uuid>`.

const TRASH = /^\.deleted-(.+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A fresh trash name under `root` for the directory of session `sessionId`. */
export function trashPath(root: string, sessionId: string): string {
  return join(root, `.deleted-${sessionId}-${randomUUID()}`)
}

/** Whether a directory entry of the store is a deleted session's directory left behind. */
export function isTrash(entry: Dirent): boolean {
  // `isDirectory()` is false for a link, which is never followed nor removed.
  const id = TRASH.exec(entry.name)?.[1]
  return entry.isDirectory() && id !== undefined && isValidSessionId(id)
}

/**
 * Removes the trash directories among the store's entries. Another store (in this process or
 * another) may be removing the same one: `force` takes what it removed first as done. A failure
 * (permissions) leaves that directory for the next `list`: trash is never a session, so nothing
 * reads it meanwhile.
 */
export async function removeTrash(root: string, entries: readonly Dirent[]): Promise<void> {
  await mapLimited(entries.filter(isTrash), TRASH_REMOVALS, (entry) =>
    rm(join(root, entry.name), { recursive: true, force: true }).catch(() => {}),
  )
}

// Few at a time: each removal holds directory handles open, beside `list`'s own reads.
const TRASH_REMOVALS = 4
