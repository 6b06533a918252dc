import { constants } from 'node:fs'
import { lstat, mkdir, open, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { type HistoryEvent, isMessage, joinText } from '@kode/protocol'
import {
  exportSessionHtml,
  isValidSessionId,
  type SessionInfo,
  type SessionStore,
  type StoreWarning,
} from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { clip } from './display/format.js'
import { truncateToWidth, visibleWidth } from './display/style.js'
import { embedImage } from './embed-image.js'
import { messageOf } from './store-warnings.js'

/** An export that kode will not write: its default file is a symbolic link. */
export class ExportLinkError extends Error {
  override readonly name = 'ExportLinkError'
}

// Where the platform has no O_NOFOLLOW (Windows), an lstat check refuses the link instead.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0
// A FIFO at the path fails at once (no reader) rather than block.
const REPLACE = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NONBLOCK ?? 0)

/**
 * Writes a session (its sub-agent sessions nested) as a self-contained HTML file; returns the
 * path. `followLink: false` for the default file in the exports directory: a link there, named
 * after a session a project shipped, would carry the page (text the project wrote) wherever it
 * points, so it is refused. A file the user names is followed.
 */
export async function exportSession(
  store: SessionStore,
  sessionId: string,
  file: string,
  { followLink = true }: { followLink?: boolean } = {},
): Promise<string> {
  // Read a batch at a time: only the page is held, not the history too.
  const html = await exportSessionHtml(store, sessionId, { resolveImage: embedImage })
  await mkdir(dirname(file), { recursive: true })
  if (followLink) {
    await writeFile(file, html)
    return file
  }
  const refused = (cause?: unknown) =>
    new ExportLinkError(`${file} is a symbolic link: kode does not write an export through it`, { cause })
  if (NOFOLLOW === 0 && (await lstat(file).catch(() => undefined))?.isSymbolicLink()) throw refused()
  const handle = await open(file, REPLACE | NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
    // Linux and macOS say ELOOP for a link opened with O_NOFOLLOW; FreeBSD says EMLINK.
    throw error.code === 'ELOOP' || error.code === 'EMLINK' ? refused(error) : error
  })
  try {
    await handle.writeFile(html)
  } finally {
    await handle.close()
  }
  return file
}

/** A stored session whose metadata could not be read, so `list()` left it out. */
export interface UnreadableSession {
  readonly id: string
  /** Why, as the store said it (the file and the mistake). */
  readonly reason: string
}

/** What the user can resume, and the sessions that could not be read to tell. */
export interface SessionListing {
  /** Top-level sessions (not sub-agents'), newest first. */
  readonly sessions: SessionInfo[]
  readonly unreadable: UnreadableSession[]
}

/** A session store, and a listing that names the sessions its `list()` had to leave out. */
export interface SessionShelf {
  readonly store: SessionStore
  listSessions(): Promise<SessionListing>
}

/**
 * The file store of `dir` as a {@link SessionShelf}: a session whose `session.json` is corrupt is
 * not silently missing from `/sessions` and `--resume`, which name it and why instead. The store's
 * other warnings (a line cut off by a crash, ignored or removed; a stale lock removed; metadata
 * not written) go to `warn`.
 */
export function openSessionShelf(
  dir: string,
  warn: (warning: StoreWarning) => void = () => {},
): SessionShelf {
  // The listings under way, each collecting the sessions its `list()` skips.
  const listings = new Set<UnreadableSession[]>()
  const onWarning = (warning: StoreWarning) => {
    if (warning.type !== 'unreadable_session' || listings.size === 0) return warn(warning)
    const reason = messageOf(warning.error)
    for (const unreadable of listings) unreadable.push({ id: warning.sessionId, reason })
  }
  const store = createFileSessionStore({ dir, onWarning })
  return {
    store,
    async listSessions() {
      const unreadable: UnreadableSession[] = []
      listings.add(unreadable)
      try {
        const sessions = await topLevelSessions(store)
        return { sessions, unreadable: unreadable.sort((a, b) => a.id.localeCompare(b.id)) }
      } finally {
        listings.delete(unreadable)
      }
    },
  }
}

/** A shelf over a store whose `list()` skips nothing (the memory store). */
export function shelfOf(store: SessionStore): SessionShelf {
  return {
    store,
    listSessions: async () => ({ sessions: await topLevelSessions(store), unreadable: [] }),
  }
}

/** The sessions a user can resume: top-level ones (not sub-agents'), newest first. */
async function topLevelSessions(store: SessionStore): Promise<SessionInfo[]> {
  return (await store.list()).filter((info) => info.subAgent === undefined)
}

/**
 * The stored session `idOrPrefix` names: its exact id, or an unambiguous prefix of a top-level
 * session's. A prefix of a session that cannot be read fails with the store's reason, as its
 * exact id does, rather than as no session at all. A sub-agent's session is refused by its id
 * too: its parent's task drives it, and a task of its own there would settle (deny) a call the
 * parent waits on and write past the parent's view of it.
 */
export async function findSession(shelf: SessionShelf, idOrPrefix: string): Promise<string> {
  const { store } = shelf
  const info = isValidSessionId(idOrPrefix) ? await store.info(idOrPrefix) : undefined
  if (info?.subAgent !== undefined) throw new Error(subAgentSessionMessage(info.id, info.parentSessionId))
  if (info) return idOrPrefix
  const { sessions, unreadable } = await shelf.listSessions()
  const ids = [...sessions.map((info) => info.id), ...unreadable.map((session) => session.id)]
  const id = matchPrefix(idOrPrefix, ids, 'session')
  // Read it again: it throws why it cannot be read, unless it was mended in between.
  if (unreadable.some((session) => session.id === id)) await store.info(id)
  return id
}

function subAgentSessionMessage(id: string, parent: string | undefined): string {
  const whose = parent === undefined ? 'its parent session' : `its parent session ${parent}`
  return `session ${id} is a sub-agent's session: the task of ${whose} drives it; resume ${parent ?? 'that session'} instead (its replay shows the sub-agent's work)`
}

/**
 * The command that continues `sessionId`: `kode --resume <id>`, with `--sessions-dir` when the
 * sessions are not where kode looks by default (the flag chose their directory), quoted for a
 * POSIX shell.
 */
export function resumeCommand(sessionId: string, sessionsDir?: string): string {
  const command = `kode --resume ${sessionId}`
  return sessionsDir === undefined ? command : `${command} --sessions-dir ${shellWord(sessionsDir)}`
}

/** `text` as one shell word: as it is when nothing in it is special to a shell, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`
}

/** The one id among `ids` that is `prefix` or starts with it; throws when none or several do. */
export function matchPrefix(prefix: string, ids: readonly string[], what: string): string {
  if (ids.includes(prefix)) return prefix
  const matches = ids.filter((id) => id.startsWith(prefix))
  if (matches.length === 1) return matches[0]!
  if (matches.length === 0) throw new Error(`no ${what} ${prefix}`)
  throw new Error(`${prefix} matches ${matches.length} ${what}s; give more of the id`)
}

/**
 * One line per session: id, last change, records, title, at most `columns` wide (terminal
 * columns: wide characters count two). The title is cut to fit, and the rest too if it must.
 */
export function sessionLines(sessions: readonly SessionInfo[], current?: string, columns = 120): string[] {
  return sessions.map((info) => {
    const mark = info.id === current ? '*' : ' '
    const when = formatWhen(info.updatedAt)
    const head = `${mark} ${info.id}  ${when}  ${String(info.recordCount).padStart(4)} records`
    const title = (info.title ?? '').replace(/\s+/g, ' ').trim()
    const room = columns - visibleWidth(head) - 2
    if (title === '' || room < 2) return truncateToWidth(head, columns)
    return `${head}  ${truncateToWidth(title, room)}`
  })
}

/** `YYYY-MM-DD HH:MM` (UTC), or the raw number for a time a Date cannot hold (never throws). */
function formatWhen(ms: number): string {
  const date = new Date(ms)
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString().slice(0, 16).replace('T', ' ')
}

/** The user prompts of a history, with the record ids `/fork` takes. */
export function promptLines(history: readonly HistoryEvent[]): string[] {
  return history.flatMap((event) =>
    isMessage(event) && event.role === 'user' ? [`${event.id}  ${clip(joinText(event.parts), 70)}`] : [],
  )
}
