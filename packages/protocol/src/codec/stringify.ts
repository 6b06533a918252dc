import { CodecError, describeThrown, kindOf } from './codec-error.js'
import { tooDeep } from './nesting.js'

/** `JSON.stringify`, with every way it can fail (or produce no JSON) turned into a `CodecError`. */
export function stringify(value: unknown): string {
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch (cause) {
    // Out of stack: nested far deeper than a record may be (a cycle is a TypeError).
    if (cause instanceof RangeError) throw tooDeep(cause)
    throw new CodecError('', 'a value JSON can represent', { cause, detail: describeThrown(cause) })
  }
  if (json === undefined) {
    throw new CodecError('', 'a value JSON can represent', { detail: `got ${kindOf(value)}` })
  }
  return json
}
