import { CodecError, validateEvent, validateHistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'

// `validateHistoryEvent` takes any value a host hands it. Whatever that value does when it is read
// (a throwing getter, a proxy trap, an odd prototype, a cycle), the function returns the value as a
// valid history event or throws a `CodecError`; when the value threw, that error is the `cause`.

const boom = new Error('boom')
const thrower = () => {
  throw boom
}

/** The error `validateHistoryEvent(value)` throws (the test fails when it returns). */
function thrownBy(value: unknown): unknown {
  try {
    validateHistoryEvent(value)
  } catch (error) {
    return error
  }
  throw new Error('validateHistoryEvent accepted a hostile value')
}

const user = { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'hi' }] }

describe('validateHistoryEvent on hostile values', () => {
  const throwing: [string, () => unknown][] = [
    ['a getter on the tag', () => Object.defineProperty({}, 'role', { get: thrower, enumerable: true })],
    [
      'a getter on a field',
      () => Object.defineProperty({ ...user }, 'createdAt', { get: thrower, enumerable: true }),
    ],
    [
      'a getter inside a part',
      () => ({
        ...user,
        parts: [Object.defineProperty({ type: 'text' }, 'text', { get: thrower, enumerable: true })],
      }),
    ],
    ['a proxy whose has trap throws', () => new Proxy({}, { has: thrower })],
    ['a proxy whose get trap throws', () => new Proxy({ ...user }, { get: thrower })],
    [
      'a prototype whose tag getter throws',
      () => Object.create(Object.defineProperty({}, 'role', { get: thrower })),
    ],
  ]

  test.each(throwing)('%s: a CodecError whose cause is what it threw', (_name, make) => {
    const error = thrownBy(make())
    expect(error).toBeInstanceOf(CodecError)
    expect(CodecError.is(error)).toBe(true)
    expect((error as CodecError).cause).toBe(boom)
  })

  test('traps validation does not need (ownKeys, getPrototypeOf) may throw: the value is valid or a CodecError', () => {
    for (const trap of ['ownKeys', 'getPrototypeOf', 'getOwnPropertyDescriptor'] as const) {
      const proxy = new Proxy({ ...user }, { [trap]: thrower })
      let result: unknown
      try {
        result = validateHistoryEvent(proxy)
      } catch (error) {
        result = error
      }
      if (result !== proxy) expect(result, trap).toBeInstanceOf(CodecError)
    }
  })

  test('a revoked proxy: a CodecError whose cause is the TypeError it threw', () => {
    const { proxy, revoke } = Proxy.revocable({ ...user }, {})
    revoke()
    const error = thrownBy(proxy)
    expect(error).toBeInstanceOf(CodecError)
    expect((error as CodecError).cause).toBeInstanceOf(TypeError)
  })

  test('a throw of a value that is no Error (or whose message throws) is the cause as it was', () => {
    const hostile = {
      get message(): string {
        throw new Error('no message either')
      },
    }
    for (const thrown of [Symbol('s'), undefined, null, 42, hostile]) {
      const value = Object.defineProperty({}, 'role', {
        get: () => {
          throw thrown
        },
      })
      const error = thrownBy(value)
      expect(error).toBeInstanceOf(CodecError)
      expect((error as CodecError).cause).toBe(thrown)
    }
  })

  test('a tag JSON cannot show (a BigInt) is a CodecError at the tag', () => {
    const error = thrownBy({ type: 10n })
    expect(error).toBeInstanceOf(CodecError)
    expect((error as CodecError).path).toBe('/type')
  })

  test('a cycle is a CodecError at the first mismatch', () => {
    const parts: unknown[] = []
    const cyclic = { ...user, parts }
    parts.push(cyclic)
    const error = thrownBy(cyclic)
    expect(error).toBeInstanceOf(CodecError)
    expect((error as CodecError).path).toBe('/parts/0')
  })

  test('an array is validated by its items as JSON writes them, whatever its iterator yields', () => {
    const parts = [{ type: 'text', text: 42 }]
    Object.defineProperty(parts, Symbol.iterator, {
      value: function* () {
        yield { type: 'text', text: 'looks fine' }
      },
    })
    const error = thrownBy({ ...user, parts })
    expect(error).toBeInstanceOf(CodecError)
    expect((error as CodecError).path).toBe('/parts/0/text')
  })

  test('an object without a prototype, or with a foreign one, is validated by its fields', () => {
    const bare = Object.assign(Object.create(null), user)
    expect(validateHistoryEvent(bare)).toBe(bare)
    const odd = Object.assign(Object.create(Array.prototype), user)
    expect(() => validateHistoryEvent(odd)).not.toThrow(TypeError)
  })
})

describe('validateEvent on hostile values', () => {
  const delta = { type: 'assistant_text_delta', sessionId: 's', timestamp: 1, content: 'x' }

  test.each([
    ['a getter on the tag', () => Object.defineProperty({}, 'type', { get: thrower, enumerable: true })],
    ['a getter on a field', () => Object.defineProperty({ ...delta }, 'content', { get: thrower })],
    ['a proxy whose get trap throws', () => new Proxy({ ...delta }, { get: thrower })],
  ])('%s: a CodecError whose cause is what it threw', (_name, make) => {
    let error: unknown
    try {
      validateEvent(make())
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(CodecError)
    expect((error as CodecError).cause).toBe(boom)
  })

  test('a revoked proxy: a CodecError whose cause is the TypeError it threw', () => {
    const { proxy, revoke } = Proxy.revocable({ ...delta }, {})
    revoke()
    let error: unknown
    try {
      validateEvent(proxy)
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(CodecError)
    expect((error as CodecError).cause).toBeInstanceOf(TypeError)
  })
})
