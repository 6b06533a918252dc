import { JsonText } from '../../transport/json-text.js'
import { holdsRun } from './same-run.js'

/**
 * The JSON text of wire values, kept per object: an agent re-sends its whole history every turn,
 * and a message's wire form is converted once and kept (`MessageCache`), so its JSON can be
 * written once too. Each request then serialises only its new messages and joins the texts,
 * byte for byte what `JSON.stringify` of the whole list gives. Texts go away with their objects
 * (a WeakMap).
 *
 * Only for values never changed once serialised: the wire forms of history messages, which are
 * never changed once written (an adapter that edits a wire object builds a new one).
 */
export class JsonTextCache {
  readonly #texts = new WeakMap<object, string>()

  /**
   * `JSON.stringify(values)`, as a {@link JsonText} for a field of the request body. `rebuilt`
   * says how many levels of containers around the kept values are built anew for each request:
   * 0 when the list holds the kept values themselves (a Chat Completions message), 2 when it
   * holds turns made for this request whose part arrays hold the kept values (an Anthropic turn
   * `{ role, content: [...] }`). Those containers are written field by field, not kept.
   * `known`, a run of the values whose JSON is kept already (the settled part of a history),
   * goes in as that text when `values` still holds it.
   */
  list(values: readonly unknown[], rebuilt = 0, known?: KnownRun): JsonText {
    if (known === undefined || !holdsRun(values, known.start, known.items))
      return new JsonText(`[${this.join(values, rebuilt)}]`)
    const end = known.start + known.items.length
    let out = '['
    if (known.start > 0) out += this.#join(values, rebuilt, 0, known.start)
    if (known.items.length > 0) out += out.length > 1 ? `,${known.json}` : known.json
    if (end < values.length) {
      const rest = this.#join(values, rebuilt, end, values.length)
      out += out.length > 1 ? `,${rest}` : rest
    }
    return new JsonText(`${out}]`)
  }

  /** The JSON of `values` joined by commas: `JSON.stringify(values)` without its brackets. */
  join(values: readonly unknown[], rebuilt = 0): string {
    return this.#join(values, rebuilt, 0, values.length)
  }

  #join(values: readonly unknown[], rebuilt: number, from: number, to: number): string {
    let out = ''
    for (let i = from; i < to; i++) {
      if (i > from) out += ','
      // An array writes `null` where a value has no JSON (undefined, a function).
      out += this.#value(values[i], rebuilt) ?? 'null'
    }
    return out
  }

  /** The JSON of `value`, `undefined` where `JSON.stringify` gives none. */
  #value(value: unknown, rebuilt: number): string | undefined {
    if (typeof value !== 'object' || value === null) return JSON.stringify(value)
    if (rebuilt === 0) return this.#kept(value)
    if (Array.isArray(value)) return `[${this.#join(value, rebuilt - 1, 0, value.length)}]`
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value)
    const record = value as Record<string, unknown>
    let out = '{'
    for (const key of Object.keys(record)) {
      const text = this.#value(record[key], rebuilt - 1)
      if (text === undefined) continue
      if (out.length > 1) out += ','
      out += `${JSON.stringify(key)}:${text}`
    }
    return `${out}}`
  }

  #kept(value: object): string | undefined {
    let text = this.#texts.get(value)
    if (text === undefined) {
      // `undefined` for an object whose `toJSON` gives nothing: not kept, asked again next time.
      text = JSON.stringify(value) as string | undefined
      if (text !== undefined) this.#texts.set(value, text)
    }
    return text
  }
}

/**
 * A run of a list whose JSON is known already: `values[start]` on are `items` (the very same
 * objects), and `json` is their JSON joined by commas (see `SettledItems`).
 */
export interface KnownRun {
  readonly start: number
  readonly items: readonly unknown[]
  readonly json: string
}
