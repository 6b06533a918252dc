import type { Style } from './style.js'
import type { MarkdownLine } from './text-stream.js'

/**
 * Renders one markdown line for the terminal: headings, lists, quotes and rules; inside prose
 * `**bold**`, `*italic*`, `` `code` `` and `[links](url)`; code blocks with a gutter. Markdown
 * markers are dropped where the style shows them, and kept as typed where it cannot.
 */
export function renderMarkdownLine(line: MarkdownLine, style: Style): string {
  switch (line.kind) {
    case 'fence':
      return style.gray(line.lang ? `┌─ ${line.lang}` : '└─')
    case 'code':
      return `${style.gray('│')} ${style.cyan(line.text)}`
    case 'prose':
      return renderProse(line.text, style)
    default: {
      const unknown: never = line.kind
      return String(unknown)
    }
  }
}

function renderProse(text: string, style: Style): string {
  const heading = /^(#{1,6})\s+(.*)$/.exec(text)
  if (heading) {
    const body = renderInline(heading[2]!, style)
    return heading[1]!.length <= 2 ? style.bold(style.underline(body)) : style.bold(body)
  }
  if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(text)) return style.gray('─'.repeat(40))
  const quote = /^\s*>\s?(.*)$/.exec(text)
  if (quote) return `${style.gray('▎')} ${style.italic(renderInline(quote[1]!, style))}`
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(text)
  if (bullet) {
    const task = /^\[([ xX])\]\s+(.*)$/.exec(bullet[2]!)
    if (task) {
      const mark = task[1] === ' ' ? '☐' : style.green('☑')
      return `${bullet[1]}${mark} ${renderInline(task[2]!, style)}`
    }
    return `${bullet[1]}${style.cyan('•')} ${renderInline(bullet[2]!, style)}`
  }
  const numbered = /^(\s*)(\d+[.)])\s+(.*)$/.exec(text)
  if (numbered) return `${numbered[1]}${style.cyan(numbered[2]!)} ${renderInline(numbered[3]!, style)}`
  return renderInline(text, style)
}

// Inline code first (its content is literal), then links, bold, italic.
const INLINE =
  /`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|__([^_]+)__|(?<![\w*])\*([^*\s][^*]*)\*(?!\w)|(?<!\w)_([^_\s][^_]*)_(?!\w)/g

/** Styles the inline markup of one line. */
export function renderInline(text: string, style: Style): string {
  return text.replace(INLINE, (_match, code, label, url, bold, bold2, italic, italic2) => {
    if (code !== undefined) return style.cyan(code)
    if (label !== undefined) return `${style.underline(renderInline(label, style))} ${style.gray(`(${url})`)}`
    if (bold !== undefined || bold2 !== undefined) return style.bold(renderInline(bold ?? bold2, style))
    return style.italic(renderInline(italic ?? italic2, style))
  })
}
