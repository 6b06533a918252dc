import { describe, expect, test } from 'vitest'
import { notificationStream, type OpenOutcome } from '../../src/notification-stream.js'

const refused: OpenOutcome = { status: 500 }
const unreachable: OpenOutcome = { error: new Error('fetch failed') }

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
    for (const stops of [{ status: 200 }, { status: 405 }]) {
      const stream = notificationStream(2)
      stream.ended()
      expect(verdicts(stream, [refused, stops, refused])).toEqual([undefined, undefined, undefined])
      stream.ended()
      expect(verdicts(stream, [refused, refused])).toEqual([undefined, refused])
    }
  })

  test('a redirect is no attempt of its own: the SDK follows it', () => {
    const stream = notificationStream(2)
    stream.ended()
    expect(verdicts(stream, [{ status: 307 }, refused, { status: 302 }, refused])).toEqual([
      undefined,
      undefined,
      undefined,
      refused,
    ])
  })
})
