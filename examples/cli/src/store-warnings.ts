import type { StoreWarning } from '@kode/session'

/**
 * What the user reads about a warning of the session store: which session, which file, and what
 * was ignored or repaired, in one line.
 */
export function describeStoreWarning(warning: StoreWarning): string {
  const session = `session ${warning.sessionId}`
  switch (warning.type) {
    case 'torn_tail':
      return `${session}: ignored the cut-off last line of ${warning.file} (line ${warning.line}, ${warning.bytes} bytes), left by a write that did not finish`
    case 'torn_tail_repaired':
      return `${session}: removed the cut-off last line of ${warning.file} (${warning.bytes} bytes) before appending`
    case 'failed_append_repaired':
      return `${session}: removed ${warning.bytes} bytes of ${warning.file} that an append which failed had left, before appending`
    case 'stale_lock_removed':
      return `${session}: removed the lock ${warning.file} left by process ${warning.pid}, which no longer runs`
    case 'metadata_write_failed':
      return `${session}: could not write ${warning.file} (${messageOf(warning.error)}); kode tries again at the next change`
    case 'unreadable_session':
      return `${session}: cannot be read: ${messageOf(warning.error)}`
    default: {
      const unknown: never = warning
      return `session store: ${JSON.stringify(unknown)}`
    }
  }
}

/**
 * A sink for the store's warnings that tells `write` each one once: a store reading a history
 * cut off mid-line warns at every read of it.
 */
export function storeWarningReporter(write: (line: string) => void): (warning: StoreWarning) => void {
  const told = new Set<string>()
  return (warning) => {
    const line = describeStoreWarning(warning)
    if (told.has(line)) return
    told.add(line)
    write(line)
  }
}

/** What a warning's `error` says: its message, or the thrown value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
