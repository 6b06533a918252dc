/** A fragment of markup that is already safe: built by `html`, never from raw text. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

const SPECIAL = /[&<>"']/g
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/**
 * Escapes text for element content and quoted attribute values. The replacement is a function,
 * so patterns like `$&` in the text are never read as replacement syntax.
 */
export function escapeHtml(text: string): string {
  return text.replace(SPECIAL, (char) => ENTITY[char]!)
}

/** What `html` accepts in a `${}` slot. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[]

/**
 * Builds markup from a template in which every interpolated value is escaped, unless it is
 * already `SafeHtml` (another `html` fragment). Arrays are joined; `null`, `undefined` and `false`
 * render nothing. There is no way to splice raw text in, which is the point.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!
  return new SafeHtml(out)
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value
  if (value === null || value === undefined || value === false) return ''
  if (Array.isArray(value)) {
    let out = ''
    for (const item of value) out += render(item)
    return out
  }
  return escapeHtml(String(value))
}
