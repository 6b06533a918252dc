import type { HistoryEvent } from '@kode/protocol'
import { sessionGoneWhile, sessionNotFound } from '../errors.js'
import { loadLinked } from '../replay/load-sub-sessions.js'
import type { SessionInfo } from '../session-info.js'
import type { SessionStore } from '../store/session-store.js'
import { type ExportHtmlOptions, exportHtml, HistorySummary, renderPage } from './export-html.js'
import { DEFAULT_IMAGE_URLS } from './image-urls.js'
import { createMarkdownRenderer } from './markdown.js'
import { TranscriptRenderer } from './render-transcript.js'

/** Options of `exportSessionHtml`. */
export interface ExportSessionHtmlOptions
  extends Pick<ExportHtmlOptions, 'title' | 'resolveImage' | 'imageUrls'> {
  /** Records read per batch where the store reads in batches (`readBatches`); default the store's. */
  batchSize?: number | undefined
  /** Ends the export, which then throws the signal's reason. */
  signal?: AbortSignal | undefined
}

/**
 * Exports a session from a store as one self-contained HTML page: the page `exportHtml` renders
 * for its history with its metadata (`info`) and its sub-agent sessions (`loadSubSessions`), byte
 * for byte. A store with `readBatches` is read a batch at a time and each record is rendered and
 * dropped as it comes, so only the page is held, not the history too. (An assistant message waits
 * for the results of its calls, which are shown inside it, so a call that never got a result
 * holds the records after it until the end.) Fails with `session_not_found` for a missing session,
 * and for one deleted (or deleted and created again under its id, by another host) while it was
 * read: the page would show one session's title and metadata over another's history.
 */
export async function exportSessionHtml(
  store: SessionStore,
  sessionId: string,
  options: ExportSessionHtmlOptions = {},
): Promise<string> {
  const { signal, batchSize, ...page } = options
  signal?.throwIfAborted()
  const info = await store.info(sessionId)
  if (!info) throw sessionNotFound(sessionId)
  if (!store.readBatches) {
    const history = await store.read(sessionId)
    const subSessions = new Map<string, HistoryEvent[]>()
    await loadLinked(store, history, subSessions, new Set(), signal)
    signal?.throwIfAborted()
    const end = await sameSession(store, info)
    const updatedAt = exportedUpdatedAt(info, end, history.length, history.at(-1)?.createdAt)
    return exportHtml(history, { ...page, info: { ...info, updatedAt }, subSessions })
  }
  const subSessions = new Map<string, HistoryEvent[]>()
  const seen = new Set([info.id])
  const imageUrls = page.imageUrls ?? DEFAULT_IMAGE_URLS
  const renderer = new TranscriptRenderer({
    subSessions,
    resolveImage: page.resolveImage,
    imageUrls,
    markdown: createMarkdownRenderer(imageUrls),
    seen,
  })
  const summary = new HistorySummary()
  for await (const batch of store.readBatches(sessionId, { batchSize, signal })) {
    await loadLinked(store, batch, subSessions, new Set(), signal)
    signal?.throwIfAborted()
    summary.add(batch)
    renderer.push(batch)
  }
  const end = await sameSession(store, info)
  const updatedAt = exportedUpdatedAt(info, end, summary.records, summary.lastCreatedAt)
  const { markup, totals } = renderer.end()
  return renderPage({ markup, totals, summary, seen, options: { ...page, info: { ...info, updatedAt } } })
}

/**
 * When the records exported were last appended to, for the page's "Updated": records appended
 * after `start` was read and before the read of the history began are on the page, so `start`
 * may be older than they are. `end`, read after the history, says it exactly when it counts the
 * records exported; when more came after the read, the newer of `start`'s time and the last
 * exported record's is the closest known.
 */
function exportedUpdatedAt(
  start: SessionInfo,
  end: SessionInfo,
  records: number,
  lastCreatedAt: number | undefined,
): number {
  if (end.recordCount === records) return end.updatedAt
  return Math.max(start.updatedAt, lastCreatedAt ?? start.updatedAt)
}

/**
 * Throws unless the session `info` describes is still there: one deleted meanwhile, or created
 * again under its id (a new `createdAt`), holds another history than the one the page shows
 * `info` over. A store that reads consistently (Postgres checks every page) already failed the
 * read of a history that changed that way; this covers the `info` read before it. Returns the
 * session's metadata as it is now.
 */
async function sameSession(store: SessionStore, info: SessionInfo): Promise<SessionInfo> {
  const now = await store.info(info.id)
  if (now?.createdAt === info.createdAt) return now
  throw sessionGoneWhile(info.id, 'while it was exported; export it again')
}
