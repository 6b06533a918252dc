/**
 * Gives back the object it is called with, so that a subclass's private fields land on that object:
 * the standard way to attach data to an object that nothing but the subclass can read or forge.
 */
class OnObject {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the subclass's fields go on `target` itself.
    return target
  }
}

/**
 * The fact that a record was checked, carried by the record: `roundTripHistoryEvent` stamps the
 * object it returns with the JSON text it read that object back from (checked) and its format
 * version. `encodeHistoryEvent` of that object, when its JSON is still exactly that text, writes
 * the line without parsing and checking the text again: what is written is text that was checked.
 *
 * Why it is safe to trust: the stamp is a private field, so only this class makes one, and only
 * for text it was told was checked; a copy of the record, or a record from anywhere else, has none
 * and is checked in full. A stamped record changed after its check (or one whose getters answer
 * differently) produces other text, which is checked in full too. Nothing is kept outside the
 * records themselves.
 */
export class CheckedLine extends OnObject {
  readonly #json: string
  readonly #version: number

  private constructor(record: object, json: string, version: number) {
    super(record)
    this.#json = json
    this.#version = version
  }

  /** Stamps `record`, the fresh object just read back from `json` and checked, of format `version`. */
  static stamp(record: object, json: string, version: number): void {
    new CheckedLine(record, json, version)
  }

  /**
   * The format version `record` was checked with, when `json` (its JSON now) is the very text it
   * was checked as; `undefined` when it was not stamped or its JSON changed since.
   */
  static versionOf(record: unknown, json: string): number | undefined {
    if (typeof record !== 'object' || record === null || !(#json in record)) return undefined
    return record.#json === json ? record.#version : undefined
  }
}
