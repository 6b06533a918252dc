import type { ErrorRecord, HistoryEvent, HistoryRecord } from '../history.js'
import type { Message } from '../messages.js'
import { CheckedLine } from './checked-line.js'
import { MESSAGE_SCHEMAS, RECORD_SCHEMAS } from './checked-schemas.js'
import { CodecError, kindOf, showValue, unreadable } from './codec-error.js'
import { compiledChecks } from './compiled-checks.generated.js'
import { formatVersionOf } from './format-version.js'
import { migrateToCurrent } from './migrations.js'
import { checkNesting } from './nesting.js'
import { parseLine } from './parse-line.js'
import { stringify } from './stringify.js'
import { TaggedUnion } from './tagged-union.js'
import { withoutVersion } from './versionless.js'
import { writtenView } from './written-view.js'

/**
 * The format version written on every persisted history line. The policy: a release that only
 * adds optional fields to existing records keeps the version, since older releases read such lines
 * and keep the new fields (see `validateHistoryEvent`). Any other change (a new record type, role,
 * part type or enum value, a renamed, removed, retyped or newly required field) bumps it, adds a
 * migration from the previous version, and older releases refuse the new lines. Each line is
 * stamped with the oldest version that can hold it (`formatVersionOf`), so only the lines that use
 * something new are refused by an older release.
 */
export const HISTORY_FORMAT_VERSION = 3

// Every history schema's check ships compiled (compiled-checks.generated.ts): the first record
// of each type costs no compilation.
const messages = new TaggedUnion<Message>('role', MESSAGE_SCHEMAS, compiledChecks)

const records = new TaggedUnion<HistoryRecord>('type', RECORD_SCHEMAS, compiledChecks)

/**
 * Validates a value as a `HistoryEvent`, throwing a `CodecError` that names the first mismatch.
 * It throws nothing else: a value that throws while it is read (a getter, a proxy, a revoked
 * proxy) is a `CodecError` whose `cause` is what it threw. Unknown extra fields, at any depth, are kept as they are: a newer release of the same format
 * version may have added optional fields, and they survive a read-and-rewrite (fork) by an older
 * one. It accepts only what `encodeHistoryEvent` accepts: the value must be valid both as it reads
 * and as `JSON.stringify` writes it (own enumerable fields only, after `toJSON`), so a field that is
 * inherited or not enumerable, which encoding would not write, does not count.
 */
export function validateHistoryEvent(value: unknown): HistoryEvent {
  const valid = validateRead(value)
  let written: unknown
  try {
    written = writtenView(value)
  } catch (cause) {
    if (cause instanceof CodecError) throw cause
    throw unreadable(cause)
  }
  try {
    refuseVersionField(validateValue(written))
  } catch (cause) {
    if (!(cause instanceof CodecError)) throw cause
    throw new CodecError(cause.path, cause.expected, {
      cause,
      detail: 'in what JSON.stringify writes of it, which has only its own enumerable fields',
    })
  }
  return valid
}

/** `validateValue`, with whatever reading the value throws turned into a `CodecError`. */
function validateRead(value: unknown): HistoryEvent {
  try {
    return validateValue(value)
  } catch (cause) {
    if (cause instanceof CodecError) throw cause
    throw unreadable(cause)
  }
}

/** Throws when `written`, a record as it is written, holds the field the format version takes. */
function refuseVersionField(written: object): void {
  if (Object.hasOwn(written, 'v')) {
    throw new CodecError('/v', 'no field named "v" (reserved for the format version)')
  }
}

/**
 * Throws for a value with a `role` whose `type` names a record. It could be either kind, and read as
 * a message (as it once was) it would be a record's line that every reader takes for a message.
 * A `type` that names no record (`"message"`, say) is an extra field of a message, as it always was.
 */
function refuseRoleOnRecord(value: object): void {
  const type = (value as { type?: unknown }).type
  if (typeof type === 'string' && records.has(type)) {
    throw new CodecError('/role', `no "role" on a record of type ${JSON.stringify(type)}`, {
      detail: 'with both, it could be a message or a record',
    })
  }
}

function validateValue(value: unknown): HistoryEvent {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    if ('role' in value) {
      refuseRoleOnRecord(value)
      return messages.validate(value)
    }
    if ('type' in value) return records.validate(value)
    throw new CodecError('', 'a message (with "role") or a history record (with "type")')
  }
  throw new CodecError('', 'an object', { detail: `got ${kindOf(value)}` })
}

/**
 * Encodes one history event as one JSON line (no trailing newline), stamped with the format version.
 * What is validated is the JSON that is written, read back: a `toJSON` method or a getter anywhere
 * in the value cannot put into the file what validation did not see. A value JSON cannot hold (a
 * cycle, a `BigInt`, a throwing `toJSON` or getter) is a `CodecError` too; nothing else is thrown.
 * A record `roundTripHistoryEvent` returned is checked once, there: encoding it while its JSON is
 * still the text that was checked only writes that text (see `CheckedLine`).
 */
export function encodeHistoryEvent(event: HistoryEvent): string {
  const json = stringify(event)
  const version = CheckedLine.versionOf(event, json) ?? formatVersionOf(checkedForm(json))
  // `{}` cannot be a valid record, so the object has a first field to put the version before.
  return `{"v":${version},${json.slice(1)}`
}

/**
 * The event as a store holds it: what `decodeHistoryEvent(encodeHistoryEvent(event))` returns (the
 * JSON that would be written, read back and validated), in one pass instead of two. Throws the
 * `CodecError` that `encodeHistoryEvent` would. The result carries the fact that it was checked,
 * so a store's `encodeHistoryEvent` of it does not check it again.
 */
export function roundTripHistoryEvent(event: HistoryEvent): HistoryEvent {
  const json = stringify(event)
  const valid = checkedForm(json)
  CheckedLine.stamp(valid, json, formatVersionOf(valid))
  return valid
}

/** The valid event a reader of `json` (the JSON written for an event) sees. */
function checkedForm(json: string): HistoryEvent {
  checkNesting(json)
  // Parsed JSON has nothing but own enumerable fields: it is checked as it reads.
  const valid = validateRead(parseWritten(json))
  refuseVersionField(valid)
  return valid
}

/** The value a reader of `json` will see (what `stringify` produced always parses). */
function parseWritten(json: string): object {
  const written: unknown = JSON.parse(json)
  if (typeof written !== 'object' || written === null || Array.isArray(written)) {
    throw new CodecError('', 'an object', { detail: `its JSON is ${kindOf(written)}` })
  }
  return written
}

/**
 * Decodes one line written by `encodeHistoryEvent` (this version or an older one). Throws a
 * `CodecError` for invalid JSON, a missing or unknown version, an unknown record type or a field
 * that does not match the schema; it never returns a half-valid object.
 */
export function decodeHistoryEvent(line: string): HistoryEvent {
  const parsed = parseLine(line)
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CodecError('', 'a JSON object', { detail: `got ${kindOf(parsed)}` })
  }
  const record = parsed as Record<string, unknown>
  const v = record.v
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw new CodecError('/v', 'a format version (a positive integer)', {
      // A number is named as it is: JSON.stringify would call an infinite one (`1e400`) null.
      detail: v === undefined ? 'missing' : `got ${typeof v === 'number' ? String(v) : showValue(v)}`,
    })
  }
  // A newer version changed more than optional fields (see HISTORY_FORMAT_VERSION): guessing
  // would misread it.
  if (v > HISTORY_FORMAT_VERSION) {
    throw new CodecError('/v', `a format version <= ${HISTORY_FORMAT_VERSION}`, {
      detail: `got ${v}: written by a newer Kode; upgrade to read it`,
    })
  }
  const rest = withoutVersion(record)
  return validateRead(v === HISTORY_FORMAT_VERSION ? rest : migrateToCurrent(rest, v))
}

export type { ErrorRecord }
