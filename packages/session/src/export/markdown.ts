import MarkdownIt, { type StateCore, type Token } from 'markdown-it'
import { type ImageUrls, shownImageUrl } from './image-urls.js'
import { isDataImage } from './render-parts.js'
import { escapeHtml, SafeHtml } from './safe-html.js'

const WEB_OR_MAIL = /^(https?:\/\/|mailto:)/i

/** Renders a model's markdown as safe markup. */
export type MarkdownRenderer = (text: string) => SafeHtml

/**
 * A markdown renderer for transcripts (CommonMark plus tables and strikethrough, by markdown-it).
 * Nothing in the text ever becomes markup of its own: `html: false` escapes raw HTML, so
 * `<script>` or `<img onerror>` show as text. Only `http(s):` and `mailto:` links become links
 * (with `rel="noopener noreferrer"`), so `javascript:` and every other scheme stay literal text;
 * images load only from inline `data:image/` URLs and any other image shows as a link to it (its
 * URL shown as `imageUrls` says), so the page makes no network request.
 *
 * Made per export, not at import: the package keeps no module state and costs nothing to import.
 */
export function createMarkdownRenderer(imageUrls: ImageUrls): MarkdownRenderer {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: true })
  // Stricter than markdown-it's own check: a transcript is a file on its own, so only web and
  // mail links (and inline images) mean anything; any other target stays literal text.
  md.validateLink = (url) => WEB_OR_MAIL.test(url.trim()) || isDataImage(url.trim())
  // The check above cannot tell a link from an image, and an inline image's URL is no link to
  // open: an SVG opened as a page runs its script. Such links become their text again.
  md.core.ruler.push('literal_data_links', literalDataLinks)
  const rules = md.renderer.rules
  const renderLinkOpen =
    rules.link_open ?? ((tokens, i, options, _env, self) => self.renderToken(tokens, i, options))
  rules.link_open = (tokens, i, options, env, self) => {
    tokens[i]!.attrSet('rel', 'noopener noreferrer')
    return renderLinkOpen(tokens, i, options, env, self)
  }
  rules.image = (tokens, i) => {
    const token = tokens[i]!
    const given = token.attrGet('src') ?? ''
    const alt = token.children?.map((child) => child.content).join('') ?? token.content
    if (isDataImage(given)) return `<img alt="${escapeHtml(alt)}" src="${escapeHtml(given)}">`
    const src = shownImageUrl(given, imageUrls)
    return `<span class="image-ref">image (not loaded): <a href="${escapeHtml(src)}" rel="noopener noreferrer">${escapeHtml(alt || src)}</a></span>`
  }
  return (text) => new SafeHtml(`<div class="markdown">${md.render(text)}</div>`)
}

/** Turns every link whose target is not a web or mail address back into literal text. */
function literalDataLinks(state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue
    // Links do not nest in markdown, but a stack keeps each close with its own open regardless.
    const refused: (string | undefined)[] = []
    block.children = block.children.map((token) => {
      if (token.type === 'link_open') {
        const href = token.attrGet('href') ?? ''
        const literal = WEB_OR_MAIL.test(href) ? undefined : href
        refused.push(literal)
        if (literal === undefined) return token
        return text(state, token.markup === 'autolink' ? '<' : '[')
      }
      if (token.type === 'link_close') {
        const literal = refused.pop()
        if (literal === undefined) return token
        return text(state, token.markup === 'autolink' ? '>' : `](${literal})`)
      }
      return token
    })
  }
}

function text(state: StateCore, content: string): Token {
  const token = new state.Token('text', '', 0)
  token.content = content
  return token
}
