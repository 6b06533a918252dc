import type { JsonTextCache, KnownRun } from './json-text-cache.js'
import type { PreparedMessages, ViewEntry } from './prepare-messages.js'

/** Makes the wire items of a run of view entries (see {@link SettledItems.items}). */
export type MakeItems<W> = (entries: readonly ViewEntry[]) => W[]

/**
 * Where the settled entries stop making final items: the entries before it make the same items
 * whatever follows them. By default all the settled entries do (each entry makes its own items);
 * a wire that merges neighbouring entries into one item ends it at the merge that may still grow
 * (see `lastTurnStart`).
 */
export type FinalEnd = (entries: readonly ViewEntry[], settled: number) => number

/** One request's wire items: those kept from the settled entries, then those of the rest. */
export interface WireItems<W> {
  /** Items shared with the other requests of the same history: never change them. */
  readonly settled: readonly W[]
  /** Items made for this request. */
  readonly rest: W[]
  /**
   * The settled items' JSON (written once, each item as `cache` writes it: see
   * {@link JsonTextCache.list}), as the run of `values` that holds them from `start` on.
   */
  known(cache: JsonTextCache, rebuilt: number, start: number): KnownRun
}

/**
 * The wire items (messages, turns, input items) made from the settled entries of a client's
 * requests (see `MessagePreparer`), kept from one request to the next with their JSON: each
 * request makes items only from the entries settled since the last one of its history and from
 * its unsettled rest, so a turn of a long conversation touches its new messages only. Kept per
 * history the preparer keeps (by its `settled.history` token), and gone with it.
 */
export class SettledItems<W> {
  readonly #kept = new WeakMap<object, KeptItems<W>>()

  /**
   * The items of `view` (from `MessagePreparer.prepare`): `make` makes those of the entries
   * settled since the last request (up to `finalEnd`) and of the rest. Equal to `make` of all the
   * entries, split in two.
   */
  items(view: PreparedMessages, make: MakeItems<W>, finalEnd?: FinalEnd): WireItems<W> {
    const entries = view.entries
    const settled = view.settled
    if (settled === undefined) return new KeptItems<W>().items(entries, 0, make)
    const end = finalEnd?.(entries, settled.count) ?? settled.count
    let kept = this.#kept.get(settled.history)
    // None yet, or it went further than this request's view (two requests of one history at once).
    if (kept === undefined || end < kept.entries) {
      kept = new KeptItems()
      this.#kept.set(settled.history, kept)
    }
    return kept.items(entries, end, make)
  }
}

/** One history's kept items and their JSON. */
class KeptItems<W> {
  /** How many entries made `#items`. */
  entries = 0
  /** A new array each time it grows: a request in flight may still hold the last one. */
  #items: readonly W[] = []
  /** The JSON of the first `#written` items, joined by commas. */
  #json = ''
  #written = 0

  /** The items of `entries`, those before `end` kept (made now when they are not yet). */
  items(entries: readonly ViewEntry[], end: number, make: MakeItems<W>): WireItems<W> {
    if (end > this.entries) {
      this.#items = this.#items.concat(make(entries.slice(this.entries, end)))
      this.entries = end
    }
    const items = this.#items
    return {
      settled: items,
      rest: make(this.entries === 0 ? entries : entries.slice(this.entries)),
      known: (cache, rebuilt, start) => ({ start, items, json: this.#jsonOf(items, cache, rebuilt) }),
    }
  }

  /** The JSON of `items`: kept when they are the current items, else written anew. */
  #jsonOf(items: readonly W[], cache: JsonTextCache, rebuilt: number): string {
    if (items !== this.#items) return cache.join(items, rebuilt)
    if (this.#written < items.length) {
      const added = cache.join(items.slice(this.#written), rebuilt)
      this.#json = this.#written === 0 ? added : `${this.#json},${added}`
      this.#written = items.length
    }
    return this.#json
  }
}
