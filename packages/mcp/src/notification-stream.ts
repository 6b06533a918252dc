import type { FailedOpening, OpenOutcome } from './stream-opening.js'

/**
 * Follows a streamable-HTTP server's notification stream (the standalone GET) through the SDK's
 * attempts to reopen it, to tell when it is gone for good. The SDK opens it once after
 * `initialize`, and a failure then is not retried: that server simply sends no notifications, as
 * one answering 405 does, and nothing is lost. Each time the stream ends or breaks, the SDK tries
 * `attempts` times (1 s, then 1.5 s apart, or at the server's `retry` interval) to reopen it: one
 * that opens it makes a later end start over; a 405 (the server offers no such stream) makes it
 * stop without a word, and is left so; a failure at the last attempt makes it give up, silently,
 * and is what `tried` reports. A redirect the SDK follows is no outcome (see `OpenOutcome`).
 */
export interface NotificationStream {
  /** The stream ended or broke, not closed by the client: the SDK will try to reopen it. */
  ended(): void
  /** A request of an attempt to open the stream came out as `outcome`: that outcome again if the SDK now gives up. */
  tried(outcome: OpenOutcome): FailedOpening | undefined
}

/** A notification stream's follower, for a transport whose SDK tries `attempts` (at least 1) times to reopen it. */
export function notificationStream(attempts: number): NotificationStream {
  /** Failed attempts since the stream last ended; `undefined` while it is open, or was never reopened. */
  let failures: number | undefined
  return {
    ended() {
      failures = 0
    },
    tried(outcome) {
      switch (outcome.kind) {
        case 'redirected':
          return undefined
        case 'opened':
        case 'not-offered':
          failures = undefined
          return undefined
        case 'refused':
        case 'unreachable':
          if (failures === undefined || ++failures < attempts) return undefined
          failures = undefined
          return outcome
        default: {
          const unknown: never = outcome
          throw new Error(`unknown outcome ${JSON.stringify(unknown)}`)
        }
      }
    },
  }
}
