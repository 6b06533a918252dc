import {
  type Citation,
  cutText,
  type ImageFilePart,
  type ImagePart,
  type ServerToolPart,
  serverToolView,
} from '@kode/protocol'
import { type ImageUrls, shownImageUrl } from './image-urls.js'
import { html, type SafeHtml } from './safe-html.js'

/** Turns an image file into a `data:` URL for embedding; `undefined` leaves it as a reference. */
export type ImageResolver = (part: ImageFilePart) => string | undefined

// Only inline image data is ever loaded: the transcript makes no network request.
const DATA_IMAGE = /^data:image\/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*;base64,[a-z0-9+/=\s]*$/i
const WEB_URL = /^https?:\/\//i
// An image that is neither inline nor on the web (a `blob:`, `gs://` reference) is named, not shown.
const MAX_IMAGE_REF = 64

/** How images are rendered: image files embedded through `resolveImage`, URLs shown as `imageUrls` says. */
export interface ImageRendering {
  resolveImage: ImageResolver | undefined
  imageUrls: ImageUrls
}

/** Whether `url` is an inline image (`data:image/...;base64,...`), the only kind ever loaded. */
export function isDataImage(url: string): boolean {
  return DATA_IMAGE.test(url)
}

/** Preformatted-wrapping text; never interpreted as markup or markdown (prompts, thinking). */
export function renderText(text: string): SafeHtml {
  return html`<div class="text">${text}</div>`
}

/** A collapsible block, closed by default. */
export function renderDetails(className: string, summary: SafeHtml | string, body: SafeHtml): SafeHtml {
  return html`<details class="${className}"><summary>${summary}</summary><div class="body">${body}</div></details>`
}

/**
 * An image: inline `data:` images are shown; image files are shown when `resolveImage` embeds
 * them; web URLs and anything else are shown as a reference (as `imageUrls` says), never loaded.
 */
export function renderImage(part: ImagePart, { resolveImage, imageUrls }: ImageRendering): SafeHtml {
  if (part.type === 'image_url') {
    if (DATA_IMAGE.test(part.url)) return html`<figure><img alt="image" src="${part.url}"></figure>`
    const url = shownImageUrl(part.url, imageUrls)
    if (WEB_URL.test(url)) {
      return html`<p class="image-ref">image (not loaded): <a href="${url}" rel="noopener noreferrer">${url}</a></p>`
    }
    return html`<p class="image-ref">image: ${cutText(url, MAX_IMAGE_REF)}</p>`
  }
  const embedded = resolveImage?.(part)
  if (embedded !== undefined && DATA_IMAGE.test(embedded)) {
    return html`<figure><img alt="${part.path}" src="${embedded}"><figcaption>${part.path}</figcaption></figure>`
  }
  return html`<p class="image-ref">image file: ${part.path} (${part.mimeType})</p>`
}

// A quoted passage is shown in part: the link or title says where the rest is.
const MAX_CITED_TEXT = 300

/**
 * The sources the model cited for a text: each with its title (or its URL) as a link when it is a
 * web address, and the passage it quotes. A link is only ever followed by the reader.
 */
export function renderCitations(citations: readonly Citation[]): SafeHtml {
  return html`<ol class="citations">${citations.map((citation) => {
    const { url, title, citedText } = citation
    const label = title ?? url ?? 'source'
    const name =
      url !== undefined && WEB_URL.test(url)
        ? html`<a href="${url}" rel="noopener noreferrer">${label}</a>`
        : label
    const quote = citedText ? html` <q>${cutText(citedText, MAX_CITED_TEXT)}</q>` : ''
    return html`<li>${name}${quote}</li>`
  })}</ol>`
}

// A search result or a file listing can be long; the transcript shows the start of it.
const MAX_SERVER_TOOL_TEXT = 4_000

/**
 * A tool the provider ran on its own side (web search, code execution, MCP), shown as what it is,
 * collapsed: a call with its name and input, code the model had run (Gemini's) as code, and what
 * it printed as text; any other result with its type, as JSON.
 */
export function renderServerTool(part: ServerToolPart): SafeHtml {
  const view = serverToolView(part)
  switch (view.kind) {
    case 'call':
      return renderDetails('server-tool', html`Server tool <code>${view.name}</code>`, jsonBlock(view.input))
    case 'code':
      return renderDetails(
        'server-tool',
        html`Code run by the provider${view.language ? html` <code>${view.language.toLowerCase()}</code>` : ''}`,
        html`<pre><code>${capped(view.code)}</code></pre>`,
      )
    case 'code_output':
      return renderDetails(
        'server-tool',
        html`Code output${view.outcome ? html` <code>${view.outcome}</code>` : ''}`,
        html`<pre>${capped(view.output)}</pre>`,
      )
    case 'result':
      return renderDetails(
        'server-tool',
        html`Server tool result <code>${view.type}</code>`,
        jsonBlock(view.content),
      )
    default: {
      const unknown: never = view
      return unknown
    }
  }
}

function jsonBlock(value: unknown): SafeHtml {
  return html`<pre>${capped(safeJson(value))}</pre>`
}

function capped(text: string): string {
  return cutText(text, MAX_SERVER_TOOL_TEXT)
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value)
  } catch {
    return String(value)
  }
}
