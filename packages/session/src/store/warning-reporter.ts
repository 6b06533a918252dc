import type { StoreWarning } from './session-store.js'

/**
 * A store's `onWarning` option as the store calls it. A warning reports on something the store
 * got past (a torn line skipped, an unreadable session left out of a list), so whatever the host's
 * callback throws is ignored: a logger that fails must not fail that operation, nor, from a
 * background write, surface as an unhandled rejection. Without a callback, warnings go nowhere.
 */
export function warningReporter(
  onWarning: ((warning: StoreWarning) => void) | undefined,
): (warning: StoreWarning) => void {
  return (warning) => {
    try {
      onWarning?.(warning)
    } catch {
      // ignored, as above
    }
  }
}
