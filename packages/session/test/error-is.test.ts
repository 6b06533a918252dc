import { describe, expect, test } from 'vitest'
import { CorruptHistoryError, SessionError, SessionLockedError } from '../src/index.js'

// `instanceof` fails across two copies of the package (its ESM and CJS builds, two installs), so
// each public error class has its own `is`; a subclass's must not answer for its base class.
describe('each session error class recognises its own instances only', () => {
  const notFound = new SessionError('session_not_found', 'no session s', { sessionId: 's' })
  const locked = new SessionLockedError('s', undefined, undefined, 'this-store')
  const corrupt = new CorruptHistoryError('s', 'history.jsonl', 3, new Error('bad'))

  test('SessionError.is accepts every SessionError, subclasses included', () => {
    for (const error of [notFound, locked, corrupt]) expect(SessionError.is(error)).toBe(true)
    expect(SessionError.is(new Error('x'))).toBe(false)
  })

  test('SessionLockedError.is accepts a SessionLockedError and no other SessionError', () => {
    expect(SessionLockedError.is(locked)).toBe(true)
    expect(SessionLockedError.is(notFound)).toBe(false)
    expect(SessionLockedError.is(corrupt)).toBe(false)
  })

  test('CorruptHistoryError.is accepts a CorruptHistoryError and no other SessionError', () => {
    expect(CorruptHistoryError.is(corrupt)).toBe(true)
    expect(CorruptHistoryError.is(notFound)).toBe(false)
    expect(CorruptHistoryError.is(locked)).toBe(false)
  })
})
