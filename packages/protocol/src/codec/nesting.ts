import { CodecError } from './codec-error.js'

/**
 * How deep a history record's JSON may nest arrays and objects, the record's own object being the
 * first level. `JSON.parse` reads any depth, but `JSON.stringify` recurses and runs out of stack
 * some thousands of levels down (fewer deeper in a call stack): a record it could read but never
 * write again would fail a fork, or any read-and-rewrite, half-way. No record Kode writes comes
 * near this.
 */
export const MAX_RECORD_NESTING = 512

const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/** The `CodecError` for JSON nested deeper than `MAX_RECORD_NESTING`. */
export function tooDeep(cause?: unknown): CodecError {
  return new CodecError('', `a record nested at most ${MAX_RECORD_NESTING} arrays and objects deep`, {
    cause,
    detail: 'it nests deeper; Kode never writes such a record',
  })
}

/** Throws `tooDeep()` when the JSON text `json` nests deeper than `MAX_RECORD_NESTING`. */
export function checkNesting(json: string): void {
  // Most lines hold fewer brackets than the limit: counting them (a fast search) settles it.
  if (!hasManyBrackets(json)) return
  let depth = 0
  let inString = false
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_RECORD_NESTING) throw tooDeep()
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--
  }
}

/** Whether `json` holds more opening brackets (in strings or not) than the limit allows levels. */
function hasManyBrackets(json: string): boolean {
  let count = 0
  for (const bracket of ['[', '{']) {
    for (let at = json.indexOf(bracket); at !== -1; at = json.indexOf(bracket, at + 1)) {
      if (++count > MAX_RECORD_NESTING) return true
    }
  }
  return false
}
