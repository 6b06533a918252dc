import type { TObject } from '@sinclair/typebox'
import { Event } from '../events/index.js'
import { CodecError, unreadable } from './codec-error.js'
import { parseLine } from './parse-line.js'
import { stringify } from './stringify.js'
import { TaggedUnion } from './tagged-union.js'

const events = new TaggedUnion<Event>('type', Event.anyOf as TObject[])

/**
 * Validates a protocol event (for example one line of `--output stream-json`). It throws nothing
 * but a `CodecError`: a value that throws while it is read (a getter, a proxy) is one whose
 * `cause` is what it threw.
 */
export function validateEvent(value: unknown): Event {
  try {
    return events.validate(value)
  } catch (cause) {
    if (cause instanceof CodecError) throw cause
    throw unreadable(cause)
  }
}

/**
 * Encodes a protocol event as one JSON line (no trailing newline). What is validated is the JSON
 * that is written, read back (after every `toJSON` and getter), so the line is one `decodeEvent`
 * takes; an invalid event, or a value JSON cannot hold (a cycle, a `BigInt`), is a `CodecError`.
 */
export function encodeEvent(event: Event): string {
  const json = stringify(event)
  events.validate(JSON.parse(json))
  return json
}

/** Decodes and validates one JSON line holding a protocol event. */
export function decodeEvent(line: string): Event {
  return events.validate(parseLine(line))
}
