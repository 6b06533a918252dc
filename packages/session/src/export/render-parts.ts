import type { ImageFilePart, ImagePart } from '@kode/protocol'
import { html, type SafeHtml } from './safe-html.js'

/** Turns an image file into a `data:` URL for embedding; `undefined` leaves it as a reference. */
export type ImageResolver = (part: ImageFilePart) => string | undefined

// Only inline image data is ever loaded: the transcript makes no network request.
const DATA_IMAGE = /^data:image\/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*;base64,[a-z0-9+/=\s]*$/i
const WEB_URL = /^https?:\/\//i

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
 * them; web URLs and anything else are shown as a reference, never loaded.
 */
export function renderImage(part: ImagePart, resolveImage: ImageResolver | undefined): SafeHtml {
  if (part.type === 'image_url') {
    if (DATA_IMAGE.test(part.url)) return html`<figure><img alt="image" src="${part.url}"></figure>`
    if (WEB_URL.test(part.url)) {
      return html`<p class="image-ref">image (not loaded): <a href="${part.url}" rel="noopener noreferrer">${part.url}</a></p>`
    }
    return html`<p class="image-ref">image: ${part.url.slice(0, 64)}…</p>`
  }
  const embedded = resolveImage?.(part)
  if (embedded !== undefined && DATA_IMAGE.test(embedded)) {
    return html`<figure><img alt="${part.path}" src="${embedded}"><figcaption>${part.path}</figcaption></figure>`
  }
  return html`<p class="image-ref">image file: ${part.path} (${part.mimeType})</p>`
}
