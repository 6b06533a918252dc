import { SessionError, SessionLockedError } from '@kode/session'
import { describe, expect, test } from 'vitest'
import {
  CorruptRecordError,
  SessionAppendInterruptedError,
  SessionLeasedError,
  SessionLeaseLostError,
} from '../src/index.js'

// `instanceof` fails across two copies of a package, so each error class has its own `is`; a
// subclass's must not answer for its base class (SessionError's `is` would, were it inherited).
describe('each Postgres store error class recognises its own instances only', () => {
  const notFound = new SessionError('session_not_found', 'no session s', { sessionId: 's' })
  const errors = {
    SessionLeasedError: [SessionLeasedError, new SessionLeasedError('s', undefined, 'unknown', undefined)],
    SessionLeaseLostError: [SessionLeaseLostError, new SessionLeaseLostError('s', 2)],
    SessionAppendInterruptedError: [
      SessionAppendInterruptedError,
      new SessionAppendInterruptedError('s', false, new Error('reset')),
    ],
    CorruptRecordError: [CorruptRecordError, new CorruptRecordError('s', 3, new Error('bad'))],
  } as const

  test.each(Object.keys(errors) as (keyof typeof errors)[])('%s.is', (name) => {
    const [cls, own] = errors[name]
    expect(cls.is(own)).toBe(true)
    expect(SessionError.is(own)).toBe(true)
    expect(cls.is(notFound)).toBe(false)
    for (const [other, instance] of Object.values(errors))
      if (other !== cls) expect(cls.is(instance), `${name}.is(${instance.name})`).toBe(false)
  })

  test('a SessionLeasedError is a SessionLockedError by SessionLockedError.is too', () => {
    expect(SessionLockedError.is(errors.SessionLeasedError[1])).toBe(true)
    expect(SessionLockedError.is(errors.SessionLeaseLostError[1])).toBe(false)
  })
})
