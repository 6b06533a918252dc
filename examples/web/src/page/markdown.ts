/**
 * Markdown to DOM, safely: every piece of text becomes a text node (`textContent`), never HTML,
 * so `<script>` or an `onerror` attribute in a model's answer shows as the characters it is.
 * Links keep only `http:`, `https:` and `mailto:` targets; any other (`javascript:`, `data:`) is
 * shown as plain text. Covers what models write: headings, paragraphs, lists, quotes, fenced
 * code, inline code, bold, italics and links.
 */
export function renderMarkdown(source: string, doc: Document = document): DocumentFragment {
  const out = doc.createDocumentFragment()
  const lines = source.split('\n')
  let i = 0
  const el = <K extends keyof HTMLElementTagNameMap>(tag: K, parent: Node): HTMLElementTagNameMap[K] =>
    parent.appendChild(doc.createElement(tag))
  while (i < lines.length) {
    const line = lines[i]!
    const fence = /^\s*(```|~~~)\s*([\w+-]*)/.exec(line)
    if (fence) {
      const body: string[] = []
      while (++i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!)) body.push(lines[i]!)
      i++
      const pre = el('pre', out)
      const code = el('code', pre)
      if (fence[2]) code.dataset.lang = fence[2]
      code.textContent = body.join('\n')
      continue
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading) {
      const level = Math.min(heading[1]!.length + 2, 6) as 3 | 4 | 5 | 6
      inline(heading[2]!, el(`h${level}`, out), doc)
      i++
      continue
    }
    const item = /^\s*([-*+]|\d+[.)])\s+/
    if (item.test(line)) {
      const list = el(/^\s*\d/.test(line) ? 'ol' : 'ul', out)
      while (i < lines.length && item.test(lines[i]!))
        inline(lines[i++]!.replace(item, ''), el('li', list), doc)
      continue
    }
    if (/^\s*>/.test(line)) {
      const quote: string[] = []
      while (i < lines.length && /^\s*>/.test(lines[i]!)) quote.push(lines[i++]!.replace(/^\s*>\s?/, ''))
      el('blockquote', out).appendChild(renderMarkdown(quote.join('\n'), doc))
      continue
    }
    if (line.trim() === '') {
      i++
      continue
    }
    const paragraph: string[] = []
    while (
      i < lines.length &&
      lines[i]!.trim() !== '' &&
      !/^\s*(```|~~~|#{1,6}\s|>|[-*+]\s|\d+[.)]\s)/.test(lines[i]!)
    ) {
      paragraph.push(lines[i++]!)
    }
    if (paragraph.length === 0) paragraph.push(lines[i++]!)
    inline(paragraph.join('\n'), el('p', out), doc)
  }
  return out
}

const SAFE_LINK = /^(https?:|mailto:)/i
const INLINE = /`([^`]+)`|\*\*(.+?)\*\*|__(.+?)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]*)\]\(([^)\s]*)\)/

/** Inline markdown of `text` appended to `parent`, as text nodes and a few safe elements. */
function inline(text: string, parent: Node, doc: Document): void {
  let rest = text
  while (rest !== '') {
    const match = INLINE.exec(rest)
    if (!match) {
      parent.appendChild(doc.createTextNode(rest))
      return
    }
    if (match.index > 0) parent.appendChild(doc.createTextNode(rest.slice(0, match.index)))
    const [whole, code, strong, strong2, em, em2, label, href] = match
    if (code !== undefined) parent.appendChild(doc.createElement('code')).textContent = code
    else if (strong !== undefined || strong2 !== undefined)
      inline(strong ?? strong2!, parent.appendChild(doc.createElement('strong')), doc)
    else if (em !== undefined || em2 !== undefined)
      inline(em ?? em2!, parent.appendChild(doc.createElement('em')), doc)
    else if (label !== undefined && href !== undefined && SAFE_LINK.test(href)) {
      const a = parent.appendChild(doc.createElement('a'))
      a.href = href
      a.rel = 'noopener noreferrer nofollow'
      a.target = '_blank'
      inline(label, a, doc)
    } else parent.appendChild(doc.createTextNode(whole))
    rest = rest.slice(match.index + whole.length)
  }
}
