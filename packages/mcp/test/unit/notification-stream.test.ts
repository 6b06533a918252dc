import { describe, expect, test } from 'vitest'
import { notificationStream } from '../../src/notification-stream.js'
import type { OpenOutcome } from '../../src/stream-opening.js'

const refused: OpenOutcome = { kind: 'refused', status: 500 }
const unreachable: OpenOutcome = { kind: 'unreachable', error: new Error('fetch failed') }
const redirected: OpenOutcome = { kind: 'redirected' }

/** What `tried` says for each outcome in turn. */
function verdicts(stream: ReturnType<typeof notificationStream>, outcomes: readonly OpenOutcome[]) {
  return outcomes.map((outcome) => stream.tried(outcome))
}

describe('notificationStream: when the SDK has given up reopening the notification stream', () => {
  test('the failed first opening is no reopening: the SDK does not retry it, and nothing was lost', () => {
    expect(verdicts(notificationStream(2), [refused, unreachable, refused])).toEqual([
      undefined,
      undefined,
      undefined,
    ])
  })

  test('once it ended, the last of the attempts failing is reported, with how it failed', () => {
    const stream = notificationStream(2)
    stream.ended()
    expect(verdicts(stream, [refused, unreachable])).toEqual([undefined, unreachable])
    const again = notificationStream(3)
    again.ended()
    expect(verdicts(again, [unreachable, unreachable, refused])).toEqual([undefined, undefined, refused])
  })

  test('an attempt that opens it, or a 405, leaves nothing to count; a later end starts over', () => {
    for (const stops of [{ kind: 'opened' }, { kind: 'not-offered' }] as const) {
      const stream = notificationStream(2)
      stream.ended()
      expect(verdicts(stream, [refused, stops, refused])).toEqual([undefined, undefined, undefined])
      stream.ended()
      expect(verdicts(stream, [refused, refused])).toEqual([undefined, refused])
    }
  })

  test('a redirect the SDK follows is no attempt of its own', () => {
    const stream = notificationStream(2)
    stream.ended()
    expect(verdicts(stream, [redirected, refused, redirected, refused])).toEqual([
      undefined,
      undefined,
      undefined,
      refused,
    ])
  })
})
