import type { HistoryEvent } from '@kode/protocol'
import { sessionNotFound } from '../errors.js'
import { loadLinked, loadSubSessions } from '../replay/load-sub-sessions.js'
import type { SessionStore } from '../store/session-store.js'
import { type ExportHtmlOptions, exportHtml, HistorySummary, renderPage } from './export-html.js'
import { createMarkdownRenderer } from './markdown.js'
import { TranscriptRenderer } from './render-transcript.js'

/** Options of `exportSessionHtml`. */
export interface ExportSessionHtmlOptions extends Pick<ExportHtmlOptions, 'title' | 'resolveImage'> {
  /** Records read per batch where the store reads in batches (`readBatches`); default 1,000. */
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
 * holds the records after it until the end.) Fails with `session_not_found` for a missing session.
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
    const subSessions = await loadSubSessions(store, history)
    signal?.throwIfAborted()
    return exportHtml(history, { ...page, info, subSessions })
  }
  const subSessions = new Map<string, HistoryEvent[]>()
  const seen = new Set([info.id])
  const renderer = new TranscriptRenderer({
    subSessions,
    resolveImage: page.resolveImage,
    markdown: createMarkdownRenderer(),
    seen,
  })
  const summary = new HistorySummary()
  for await (const batch of store.readBatches(sessionId, { batchSize, signal })) {
    await loadLinked(store, batch, subSessions, new Set())
    signal?.throwIfAborted()
    summary.add(batch)
    renderer.push(batch)
  }
  const { markup, totals } = renderer.end()
  return renderPage({ markup, totals, summary, seen, options: { ...page, info } })
}
