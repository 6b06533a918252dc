import { CodecError, encodeHistoryEvent, type HistoryEvent, validateHistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'

// `validateHistoryEvent` accepts only what `encodeHistoryEvent` accepts: a value is valid as it
// reads and as `JSON.stringify` writes it, which sees own enumerable fields only.

const user = { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'hi' }] }
const error = { type: 'error', id: 'e1', createdAt: 1, message: 'boom', canRetry: false }

/** The `CodecError` each of validation and encoding throws for `value` (a test fails when one returns). */
function refusals(value: unknown): CodecError[] {
  const refused: CodecError[] = []
  for (const run of [() => validateHistoryEvent(value), () => encodeHistoryEvent(value as HistoryEvent)]) {
    try {
      run()
    } catch (thrown) {
      expect(thrown).toBeInstanceOf(CodecError)
      refused.push(thrown as CodecError)
      continue
    }
    throw new Error('validation or encoding accepted a value whose JSON is invalid')
  }
  return refused
}

describe('validateHistoryEvent refuses what encoding refuses', () => {
  test('a record whose fields are all inherited', () => {
    const [validation, encoding] = refusals(Object.create(error))
    expect(validation!.path).toBe('')
    expect(encoding!.path).toBe('')
  })

  test('a message whose required field is inherited', () => {
    const { createdAt, ...rest } = user
    const [validation] = refusals(Object.assign(Object.create({ createdAt }), rest))
    expect(validation!.path).toBe('/createdAt')
  })

  test('a part whose text is inherited', () => {
    const [validation] = refusals({
      ...user,
      parts: [Object.assign(Object.create({ text: 'hi' }), { type: 'text' })],
    })
    expect(validation!.path).toBe('/parts/0/text')
  })

  test('a field that is not enumerable', () => {
    const value = Object.defineProperty({ ...error }, 'message', { value: 'boom', enumerable: false })
    const [validation] = refusals(value)
    expect(validation!.path).toBe('/message')
  })

  test('a part whose toJSON writes something invalid', () => {
    const part = { type: 'text', text: 'hi', toJSON: () => ({ type: 'text', text: 1 }) }
    const [validation] = refusals({ ...user, parts: [part] })
    expect(validation!.path).toBe('/parts/0/text')
  })

  test('an unknown extra field JSON cannot hold: a cycle, a BigInt', () => {
    const cyclic: Record<string, unknown> = { ...user }
    cyclic.extra = { back: cyclic }
    expect(refusals(cyclic)[0]!.path).toBe('/extra/back')
    expect(refusals({ ...user, extra: [1n] })[0]!.path).toBe('/extra/0')
  })

  test('a field named "v", which the format version takes', () => {
    expect(refusals({ ...user, v: 1 })[0]!.path).toBe('/v')
  })
})

describe('validateHistoryEvent still accepts', () => {
  test('a value valid both as it reads and as it is written, returned as it is', () => {
    const withExtras = { ...user, extra: { when: new Date(0), gone: undefined, n: Number.NaN } }
    expect(validateHistoryEvent(withExtras)).toBe(withExtras)
    const prototype = Object.create({ inheritedExtra: 1 })
    const own = Object.assign(prototype, error)
    expect(validateHistoryEvent(own)).toBe(own)
    expect(() => encodeHistoryEvent(own)).not.toThrow()
  })
})
