import type { HistoryEvent } from '@kode/protocol'
import { firstPrompt } from '../first-prompt.js'
import type { SubSessionHistories } from '../replay/derive-replay.js'
import type { SessionInfo } from '../session-info.js'
import { formatTime, type Totals } from './format.js'
import { DEFAULT_IMAGE_URLS, type ImageUrls } from './image-urls.js'
import { createMarkdownRenderer } from './markdown.js'
import type { ImageResolver } from './render-parts.js'
import { renderTranscript } from './render-transcript.js'
import { html, SafeHtml } from './safe-html.js'
import { TRANSCRIPT_CSS } from './styles.js'

/** Options of `exportHtml`. */
export interface ExportHtmlOptions {
  /** The page title; by default the session's title, else its first prompt. */
  title?: string | undefined
  /** The session's metadata, shown in the header (id, dates, model, parent). */
  info?: SessionInfo | undefined
  /** Sub-agent sessions to nest under the tool calls that ran them (see `loadSubSessions`). */
  subSessions?: SubSessionHistories | undefined
  /**
   * Embeds an `image_file` part: return a `data:image/...;base64,` URL, or `undefined` to show
   * the file's path instead. Only `data:image/` URLs are ever embedded.
   */
  resolveImage?: ImageResolver | undefined
  /**
   * How the URL of a web image (linked, never loaded) is shown: by default `'origin-and-path'`,
   * without the query, fragment and `user:password@` where a signed URL keeps its signature;
   * `'as-given'` keeps it as the history has it. See `ImageUrls`.
   */
  imageUrls?: ImageUrls | undefined
}

// No network and no script: only inline styles and inline (data:) images may load.
const CSP =
  "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
const DEFAULT_TITLE = 'Kode session'
// Our own constant stylesheet: trusted, and it must not be entity-escaped inside <style>.
const STYLE = new SafeHtml(TRANSCRIPT_CSS)

/**
 * Renders a history as one self-contained HTML file: user, developer and assistant messages,
 * thinking and tool calls as collapsible `<details>` (failed, interrupted and missing results
 * marked), images, usage and cost per response and in total, and linked sub-agent sessions
 * nested under the tool calls that ran them. The assistant's text and tools' markdown notes are
 * rendered as markdown, safely: HTML in them shows as text, script links are refused and no
 * image loads from the network. Prompts, thinking, arguments and outputs are shown as text.
 * Cost reads `cost unknown` where the model's prices are not known, and a task the user
 * interrupted ends with `Task interrupted`. The page runs no script and a Content-Security-Policy
 * forbids any network request. The output depends only on its inputs.
 */
export function exportHtml(history: readonly HistoryEvent[], options: ExportHtmlOptions = {}): string {
  const { info } = options
  const seen = new Set<string>(info ? [info.id] : [])
  const { markup, totals } = renderTranscript(history, {
    subSessions: options.subSessions ?? new Map(),
    resolveImage: options.resolveImage,
    imageUrls: options.imageUrls ?? DEFAULT_IMAGE_URLS,
    markdown: createMarkdownRenderer(options.imageUrls ?? DEFAULT_IMAGE_URLS),
    seen,
  })
  const summary = new HistorySummary()
  summary.add(history)
  return renderPage({ markup, totals, summary, seen, options })
}

/** What the page's header says about a history, gathered as its records go by. */
export class HistorySummary {
  records = 0
  started: number | undefined
  /** The `createdAt` of the last record added. */
  lastCreatedAt: number | undefined
  prompt: string | undefined
  readonly models = new Set<string>()

  add(records: readonly HistoryEvent[]): void {
    if (this.records === 0 && records.length > 0) this.started = records[0]!.createdAt
    if (records.length > 0) this.lastCreatedAt = records.at(-1)!.createdAt
    this.records += records.length
    if (this.prompt === undefined) this.prompt = firstPrompt(records)
    for (const e of records) if ('role' in e && e.role === 'assistant' && e.model) this.models.add(e.model)
  }
}

/** The rendered transcript and what surrounds it. */
export interface PageParts {
  markup: SafeHtml
  totals: Totals
  summary: HistorySummary
  /** The sessions rendered (this one, when `info` names it, and the nested sub-agent sessions). */
  seen: ReadonlySet<string>
  options: ExportHtmlOptions
}

/** The whole page around a rendered transcript. */
export function renderPage({ markup, totals, summary, seen, options }: PageParts): string {
  const { info } = options
  const title = options.title ?? (info?.title || summary.prompt || DEFAULT_TITLE)
  const started = info?.createdAt ?? summary.started
  const models = [...summary.models]
  const nested = seen.size - (info ? 1 : 0)
  const facts: [string, string | undefined][] = [
    ['Session', info?.id],
    ['Started', started !== undefined ? formatTime(started) : undefined],
    ['Updated', info ? formatTime(info.updatedAt) : undefined],
    [
      'Forked from',
      info?.forkedFrom ? `${info.forkedFrom.sessionId} at ${info.forkedFrom.messageId}` : undefined,
    ],
    ['Parent', info?.parentSessionId && !info.forkedFrom ? info.parentSessionId : undefined],
    ['Models', models.length ? models.join(', ') : undefined],
    ['Records', String(summary.records)],
    [
      'Total',
      `${totals.describe()}${nested ? ` (with ${nested} sub-agent ${nested === 1 ? 'session' : 'sessions'})` : ''}`,
    ],
  ]
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${title}</h1>
<dl class="meta">${facts.map(([term, value]) => (value === undefined ? '' : html`<dt>${term}</dt><dd>${value}</dd>`))}</dl>
${markup}
<footer class="totals">Total: ${totals.describe()}</footer>
</main>
</body>
</html>
`.value
}
