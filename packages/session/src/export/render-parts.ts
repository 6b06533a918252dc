import type { ImageFilePart, ImagePart, ServerToolPart } from '@kode/protocol'
import { type ImageUrls, shownImageUrl } from './image-urls.js'
import { html, type SafeHtml } from './safe-html.js'

/** Turns an image file into a `data:` URL for embedding; `undefined` leaves it as a reference. */
export type ImageResolver = (part: ImageFilePart) => string | undefined

// Only inline image data is ever loaded: the transcript makes no network request.
const DATA_IMAGE = /^data:image\/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*;base64,[a-z0-9+/=\s]*$/i
const WEB_URL = /^https?:\/\//i

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
    return html`<p class="image-ref">image: ${url.slice(0, 64)}…</p>`
  }
  const embedded = resolveImage?.(part)
  if (embedded !== undefined && DATA_IMAGE.test(embedded)) {
    return html`<figure><img alt="${part.path}" src="${embedded}"><figcaption>${part.path}</figcaption></figure>`
  }
  return html`<p class="image-ref">image file: ${part.path} (${part.mimeType})</p>`
}

// A search result or a file listing can be long; the transcript shows the start of it.
const MAX_SERVER_TOOL_JSON = 4_000

/**
 * A tool the provider ran on its own side (web search, code execution, MCP), shown as what it is:
 * the call with its name and input, or the result with its type, the block as JSON, collapsed.
 */
export function renderServerTool(part: ServerToolPart): SafeHtml {
  const block = part.block as Record<string, unknown>
  const name = typeof block.name === 'string' ? block.name : undefined
  const isCall = 'input' in block || name !== undefined
  const summary = isCall
    ? html`Server tool <code>${name ?? part.block.type}</code>`
    : html`Server tool result <code>${part.block.type}</code>`
  const shown = isCall ? block.input : 'content' in block ? block.content : block
  let json = safeJson(shown)
  if (json.length > MAX_SERVER_TOOL_JSON) json = `${json.slice(0, MAX_SERVER_TOOL_JSON)}…`
  return renderDetails('server-tool', summary, html`<pre>${json}</pre>`)
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value)
  } catch {
    return String(value)
  }
}
