import { closeBidi } from './bidi.js'

/**
 * A fragment of markup that is already safe: built by `html`, never from raw text. `slots`: the
 * places, in order, where markup rendered later goes (see `slot`).
 */
export class SafeHtml {
  constructor(
    readonly value: string,
    readonly slots?: readonly Slot[] | undefined,
  ) {}
  toString(): string {
    return this.value
  }
}

/** A place in a fragment's `value`, at offset `at`, where the markup `key` names goes later. */
export interface Slot {
  readonly at: number
  readonly key: number
}

/** An empty fragment that holds the place of markup `key`, filled in later by `fillSlots`. */
export function slot(key: number): SafeHtml {
  return new SafeHtml('', [{ at: 0, key }])
}

/** The fragment with each slot replaced by `fill(key)`; a fragment without slots as it is. */
export function fillSlots(fragment: SafeHtml, fill: (key: number) => SafeHtml | string): SafeHtml {
  const { value, slots } = fragment
  if (slots === undefined) return fragment
  let out = ''
  let from = 0
  for (const { at, key } of slots) {
    const markup = fill(key)
    out += value.slice(from, at) + (typeof markup === 'string' ? markup : markup.value)
    from = at
  }
  return new SafeHtml(out + value.slice(from))
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
 * render nothing. There is no way to splice raw text in, which is the point. Text shown as content
 * has the bidi embeddings it leaves open closed (see `closeBidi`); an attribute value (after `="`)
 * is kept as it is, since a URL must not change.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  const out: Built = { text: strings[0]!, slots: undefined }
  for (let i = 0; i < values.length; i++) {
    append(out, values[i], strings[i]!.endsWith('="'))
    out.text += strings[i + 1]!
  }
  return new SafeHtml(out.text, out.slots)
}

interface Built {
  text: string
  slots: Slot[] | undefined
}

function append(out: Built, value: HtmlValue, attribute: boolean): void {
  if (value instanceof SafeHtml) {
    // A fragment's slots move with it, to where it lands.
    if (value.slots !== undefined) {
      out.slots ??= []
      for (const { at, key } of value.slots) out.slots.push({ at: out.text.length + at, key })
    }
    out.text += value.value
  } else if (Array.isArray(value)) {
    for (const item of value) append(out, item, attribute)
  } else if (value !== null && value !== undefined && value !== false) {
    const text = String(value)
    out.text += escapeHtml(attribute ? text : closeBidi(text))
  }
}
