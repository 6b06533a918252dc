import { readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { type HistoryEvent, isMessage, joinText } from '@kode/protocol'
import { exportSessionHtml, isValidSessionId, type SessionInfo, type SessionStore } from '@kode/session'
import { clip } from './display/format.js'
import { truncateToWidth, visibleWidth } from './display/style.js'

/** Writes a session (its sub-agent sessions nested) as a self-contained HTML file; returns the path. */
export async function exportSession(store: SessionStore, sessionId: string, file: string): Promise<string> {
  // Read a batch at a time: only the page is held, not the history too.
  const html = await exportSessionHtml(store, sessionId, { resolveImage: embedImage })
  await mkdir(dirname(file), { recursive: true })
  await writeFile(file, html)
  return file
}

/** Embeds an image file the session refers to, when it can still be read. */
function embedImage(part: { path: string; mimeType: string }): string | undefined {
  try {
    return `data:${part.mimeType};base64,${readFileSync(part.path).toString('base64')}`
  } catch {
    return undefined
  }
}

/** The sessions a user can resume: top-level ones (not sub-agents'), newest first. */
export async function topLevelSessions(store: SessionStore): Promise<SessionInfo[]> {
  return (await store.list()).filter((info) => info.subAgent === undefined)
}

/** The stored session `idOrPrefix` names: its exact id, or an unambiguous prefix of a top-level session's. */
export async function findSession(store: SessionStore, idOrPrefix: string): Promise<string> {
  if (isValidSessionId(idOrPrefix) && (await store.info(idOrPrefix))) return idOrPrefix
  const ids = (await topLevelSessions(store)).map((info) => info.id)
  return matchPrefix(idOrPrefix, ids, 'session')
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
