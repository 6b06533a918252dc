/** How an attempt to open a streamable-HTTP server's notification stream came out: a status, or no response. */
export type OpenOutcome = { readonly status: number } | { readonly error: unknown }

/**
 * Follows a streamable-HTTP server's notification stream (the standalone GET) through the SDK's
 * attempts to reopen it, to tell when it is gone for good. The SDK opens it once after
 * `initialize`, and a failure then is not retried: that server simply sends no notifications, as
 * one answering 405 does, and nothing is lost. Each time the stream ends or breaks, the SDK tries
 * `attempts` times (1 s, then 1.5 s apart, or at the server's `retry` interval) to reopen it: one
 * that opens it makes a later end start over; a 405 (the server offers no such stream) makes it
 * stop without a word, and is left so; a failure at the last attempt makes it give up, silently,
 * and is what `tried` reports. A redirect is no outcome: the SDK follows it with another request.
 */
export interface NotificationStream {
  /** The stream ended or broke, not closed by the client: the SDK will try to reopen it. */
  ended(): void
  /** An attempt to open the stream came out as `outcome`: that outcome again if the SDK now gives up. */
  tried(outcome: OpenOutcome): OpenOutcome | undefined
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
      if (failures === undefined) return undefined
      if ('status' in outcome) {
        if (outcome.status >= 300 && outcome.status < 400) return undefined
        if (outcome.status < 300 || outcome.status === 405) {
          failures = undefined
          return undefined
        }
      }
      if (++failures < attempts) return undefined
      failures = undefined
      return outcome
    },
  }
}
