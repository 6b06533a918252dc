import { CodecError, decodeHistoryEvent, encodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import * as fc from 'fast-check'
import { afterEach, describe, expect, test } from 'vitest'
import * as arb from './arbitraries.js'

// Values a host, a tool or a file could hand the codec on purpose or by accident. The codec's
// promise: it returns a line that decodes to a valid record, or throws a `CodecError`; it never
// throws anything else and never writes to a prototype.

const user = (parts: unknown[]) =>
  ({ role: 'user', id: 'u1', createdAt: 1, parts }) as unknown as HistoryEvent

/** Encodes `value`; returns the line, or the `CodecError` thrown (any other throw fails the test). */
function encodeOrCodecError(value: unknown): string | CodecError {
  try {
    return encodeHistoryEvent(value as HistoryEvent)
  } catch (error) {
    if (!CodecError.is(error)) throw new Error(`threw something other than a CodecError: ${String(error)}`)
    return error
  }
}

function decodeOrCodecError(line: string): HistoryEvent | CodecError {
  try {
    return decodeHistoryEvent(line)
  } catch (error) {
    if (!CodecError.is(error)) throw new Error(`threw something other than a CodecError: ${String(error)}`)
    return error
  }
}

const prototypes = [Object.prototype, Array.prototype, Function.prototype, String.prototype]
const snapshot = () => prototypes.map((p) => Object.getOwnPropertyNames(p).sort().join(','))
const pristine = snapshot()
afterEach(() => {
  expect(snapshot(), 'a prototype gained or lost a property').toEqual(pristine)
  expect(({} as Record<string, unknown>).polluted).toBeUndefined()
})

describe('encodeHistoryEvent validates what it writes', () => {
  test('a part whose toJSON returns something invalid is refused, not written', () => {
    const part = { type: 'text', text: 'fine', toJSON: () => ({ type: 'text', text: 42 }) }
    const error = encodeOrCodecError(user([part]))
    expect(error).toBeInstanceOf(CodecError)
    expect((error as CodecError).path).toBe('/parts/0/text')
  })

  test('a record whose toJSON replaces it with another shape is refused', () => {
    const event = { ...user([]), toJSON: () => ({ role: 'assistant', hacked: true }) }
    expect(encodeOrCodecError(event)).toBeInstanceOf(CodecError)
  })

  test('a toJSON that returns a valid value writes that value, which decodes back', () => {
    const part = { type: 'text', text: 'shown', toJSON: () => ({ type: 'text', text: 'written' }) }
    const line = encodeOrCodecError(user([part]))
    expect(typeof line).toBe('string')
    expect(decodeHistoryEvent(line as string)).toEqual(user([{ type: 'text', text: 'written' }]))
  })

  test('a getter that answers validation and serialisation differently cannot slip through', () => {
    let reads = 0
    const part = {
      type: 'text',
      get text() {
        reads++
        return reads === 1 ? 'valid' : (undefined as unknown as string)
      },
    }
    const line = encodeOrCodecError(user([part]))
    if (typeof line === 'string') expect(decodeOrCodecError(line)).not.toBeInstanceOf(CodecError)
    else expect(line.path).toBe('/parts/0/text')
  })

  test('a toJSON that returns undefined for the whole record is refused', () => {
    expect(encodeOrCodecError({ ...user([]), toJSON: () => undefined })).toBeInstanceOf(CodecError)
  })

  test('a "v" field produced by toJSON is refused: the version is the codec\'s', () => {
    const error = encodeOrCodecError({ ...user([]), toJSON: () => ({ ...user([]), v: 99 }) })
    expect((error as CodecError).path).toBe('/v')
  })

  test.each([
    [
      'a cycle',
      () => {
        const extra: Record<string, unknown> = { type: 'x' }
        extra.self = extra
        return extra
      },
    ],
    ['a BigInt', () => ({ type: 'x', n: 10n })],
    [
      'a throwing toJSON',
      () => ({
        toJSON() {
          throw new Error('no')
        },
      }),
    ],
    [
      'a throwing getter',
      () => ({
        get boom() {
          throw Object.create(null)
        },
      }),
    ],
    [
      'a toJSON that throws an Error whose message getter throws',
      () => ({
        toJSON() {
          const error = new Error()
          Object.defineProperty(error, 'message', {
            get() {
              throw new Error('again')
            },
          })
          throw error
        },
      }),
    ],
    [
      'a revoked proxy',
      () => {
        const { proxy, revoke } = Proxy.revocable({}, {})
        revoke()
        return proxy
      },
    ],
  ])('a value JSON cannot hold (%s) is a CodecError', (_name, make) => {
    const event = { role: 'tool', id: 't', createdAt: 1, toolCallId: 'c', toolName: 'x', status: 'success' }
    const error = encodeOrCodecError({ ...event, outputText: '', parts: [], uiExtra: make() })
    expect(error).toBeInstanceOf(CodecError)
  })
})

// Keys a hostile value may carry. `__proto__` as an own key (as JSON.parse makes it) is the one that
// pollutes when copied with plain assignment.
const hostileKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toJSON',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'v',
  'role',
  'type',
  'parts',
)
const key = fc.oneof(hostileKey, fc.string({ maxLength: 8 }))

/** JSON text of random shape with hostile keys, as a file on disk could hold it. */
const hostileJson: fc.Arbitrary<string> = fc
  .letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom(null, true, false, 0, -1, 1e308, 'polluted'),
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.double(),
      fc.array(tie('value'), { maxLength: 4 }),
      tie('object'),
    ),
    object: fc
      .array(fc.tuple(key, tie('value')), { maxLength: 6 })
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  }))
  .value.map((value) => (typeof value === 'string' && value.startsWith('{') ? value : JSON.stringify(value)))

/** A valid record's line with one field set to a random value under a random (often hostile) key. */
const mutatedLine = fc
  .tuple(arb.historyEvent, key, fc.jsonValue({ maxDepth: 3 }), fc.boolean())
  .map(([event, k, value, nested]) => {
    const line = encodeHistoryEvent(event)
    const field = `${JSON.stringify(k)}:${JSON.stringify(value) ?? 'null'}`
    if (nested && line.includes('"parts":[{')) return line.replace('"parts":[{', `"parts":[{${field},`)
    return `${line.slice(0, -1)},${field}}`
  })

/** Objects of random shape and values (fast-check's `anything`: null prototypes, odd keys, -0). */
const anything = fc.anything({
  maxDepth: 3,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withSparseArray: true,
  withNullPrototype: true,
  withObjectString: true,
  key,
})

describe('property: hostile input gets a CodecError or a valid record, nothing else', () => {
  const runs = { numRuns: 400, interruptAfterTimeLimit: 5_000 }

  test('decode of JSON with random shapes and hostile keys', () => {
    fc.assert(
      fc.property(hostileJson, (line) => {
        decodeOrCodecError(line)
        decodeOrCodecError(`{"v":1,${line.slice(1)}`)
      }),
      runs,
    )
  })

  test('decode of valid lines with a random field added (top level or inside a part)', () => {
    fc.assert(
      fc.property(mutatedLine, (line) => {
        const result = decodeOrCodecError(line)
        if (!(result instanceof CodecError)) {
          // What decodes re-encodes to a line that decodes to the same record.
          expect(decodeHistoryEvent(encodeHistoryEvent(result))).toEqual(result)
        }
      }),
      runs,
    )
  })

  test('decode of valid lines cut anywhere or with a byte changed', () => {
    fc.assert(
      fc.property(arb.historyEvent, fc.nat(), fc.integer({ min: 0, max: 0xffff }), (event, at, code) => {
        const line = encodeHistoryEvent(event)
        const cut = at % (line.length + 1)
        decodeOrCodecError(line.slice(0, cut))
        decodeOrCodecError(line.slice(0, cut) + String.fromCharCode(code) + line.slice(cut + 1))
      }),
      runs,
    )
  })

  test('encode of random values, alone and in every field of a valid record', () => {
    fc.assert(
      fc.property(anything, arb.historyEvent, key, (value, event, k) => {
        encodeOrCodecError(value)
        const result = encodeOrCodecError({ ...event, [k]: value })
        if (typeof result === 'string') expect(decodeOrCodecError(result)).not.toBeInstanceOf(CodecError)
      }),
      runs,
    )
  })

  test('encode of values whose toJSON returns random values', () => {
    fc.assert(
      fc.property(arb.historyEvent, anything, fc.boolean(), (event, replacement, deep) => {
        const target: Record<string, unknown> =
          deep && 'parts' in event && event.parts.length > 0
            ? { ...event, parts: [{ ...event.parts[0], toJSON: () => replacement }, ...event.parts.slice(1)] }
            : { ...event, toJSON: () => replacement }
        const result = encodeOrCodecError(target)
        if (typeof result === 'string') expect(decodeOrCodecError(result)).not.toBeInstanceOf(CodecError)
      }),
      runs,
    )
  })
})
