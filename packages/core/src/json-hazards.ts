/**
 * What `JSON.parse` accepts but reads ambiguously or lossily, in a model's tool arguments:
 *
 * - a key repeated in one object: `JSON.parse` keeps the last value, while whoever reviews the
 *   call (a person approving it, a hook, a log) may read the first;
 * - a `__proto__` key, or a `constructor` key holding `prototype`: `JSON.parse` makes them plain
 *   own keys, but a tool that copies its arguments with `Object.assign` or a deep merge swaps a
 *   prototype (or pollutes `Object.prototype`) with them;
 * - an integer beyond 2^53 that a number cannot hold exactly: it is rounded without a word, so an
 *   id the model sent changes (one it holds exactly, such as 2^60, reads as written).
 *
 * Each is refused with a sentence the model can act on; a value that needs such a key or number
 * can be sent as a string.
 */

/** Where the scan is inside the text: an object (with the keys seen) or an array. */
type Frame = (
  | { kind: 'object'; keys: Set<string>; key: string | undefined }
  | { kind: 'array'; index: number }
) & {
  /** The frame holding this one, and the key or index this one is at there (paths are made only for a hazard). */
  parent: Frame | undefined
  at: string | number | undefined
}

/**
 * The first hazard of `text`, which `JSON.parse` accepted, as a sentence ending with where it is
 * (`(at /path)`); `undefined` when there is none.
 */
export function jsonHazard(text: string): string | undefined {
  const stack: Frame[] = []
  let i = 0
  while (i < text.length) {
    const code = text.charCodeAt(i)
    if (code === QUOTE) {
      const end = stringEnd(text, i)
      const top = stack.at(-1)
      if (top?.kind === 'object' && top.key === undefined) {
        const raw = text.slice(i + 1, end - 1)
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end)) as string) : raw
        const hazard = keyHazard(top, key)
        if (hazard) return hazard
        top.keys.add(key)
        top.key = key
      } else next(stack)
      i = end
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      const parent = stack.at(-1)
      const at = parent?.kind === 'object' ? parent.key : parent?.index
      stack.push(
        code === OPEN_BRACE
          ? { kind: 'object', keys: new Set(), key: undefined, parent, at }
          : { kind: 'array', index: 0, parent, at },
      )
      i++
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      stack.pop()
      next(stack)
      i++
    } else if (code === MINUS || (code >= ZERO && code <= NINE)) {
      let end = i + 1
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++
      const token = text.slice(i, end)
      // A fraction or an exponent says the model meant a float, which rounds as floats do.
      if (!/[.eE]/.test(token) && !readsExactly(token)) {
        return `the integer ${cut(token)} cannot be read exactly (beyond 2^53); send it as a string (at ${shown(valuePath(stack.at(-1)))})`
      }
      next(stack)
      i += token.length
    } else if (code === LETTER_T || code === LETTER_F || code === LETTER_N) {
      // true, false, null
      next(stack)
      i += code === LETTER_F ? 5 : 4
    } else i++ // whitespace, `:` and `,`
  }
  return undefined
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const MINUS = 0x2d
const ZERO = 0x30
const NINE = 0x39
const LETTER_T = 0x74
const LETTER_F = 0x66
const LETTER_N = 0x6e

/** Whether the integer `token` is the number `JSON.parse` reads it as, digit for digit. */
function readsExactly(token: string): boolean {
  const value = Number(token)
  if (Number.isSafeInteger(value)) return true
  return Number.isFinite(value) && BigInt(token) === BigInt(value)
}

/** Whether `code` may continue a JSON number (in JSON that parsed, nothing else follows one but these). */
function isNumberChar(code: number): boolean {
  return (
    (code >= ZERO && code <= NINE) ||
    code === 0x2e ||
    code === 0x65 ||
    code === 0x45 ||
    code === 0x2b ||
    code === MINUS
  )
}

function keyHazard(object: Frame & { kind: 'object' }, key: string): string | undefined {
  const at = `(at ${shown(pathOf(object))})`
  if (key === '__proto__') return `a key named "__proto__" is not allowed ${at}`
  if (object.keys.has(key)) return `the key ${JSON.stringify(cut(key))} appears twice in one object ${at}`
  if (key === 'prototype' && object.at === 'constructor' && object.parent?.kind === 'object') {
    return `a "constructor" key holding "prototype" is not allowed (at ${shown(pathOf(object.parent))})`
  }
  return undefined
}

/** The offset just after the string that starts (with its quote) at `start`. */
function stringEnd(text: string, start: number): number {
  let from = start + 1
  for (;;) {
    const quote = text.indexOf('"', from)
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    from = quote + 1
  }
}

/** The JSON Pointer of `frame` (`''` for the top level). */
function pathOf(frame: Frame | undefined): string {
  const steps: string[] = []
  for (let f = frame; f?.at !== undefined; f = f.parent) steps.push(step(f.at))
  return steps.reverse().join('')
}

/** The JSON Pointer of the value that starts now, inside `top`. */
function valuePath(top: Frame | undefined): string {
  if (!top) return ''
  return pathOf(top) + step(top.kind === 'array' ? top.index : (top.key ?? ''))
}

function step(at: string | number): string {
  return typeof at === 'number' ? `/${at}` : `/${at.replaceAll('~', '~0').replaceAll('/', '~1')}`
}

/** A value ended: the object expects its next key, the array counts it. */
function next(stack: Frame[]): void {
  const top = stack.at(-1)
  if (top?.kind === 'object') top.key = undefined
  else if (top) top.index++
}

function shown(path: string): string {
  return path === '' ? '/' : cut(path)
}

function cut(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text
}
