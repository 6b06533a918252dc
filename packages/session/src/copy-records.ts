import type { HistoryEvent } from '@kode/protocol'
import { DEFAULT_READ_BATCH_SIZE, type SessionStore } from './store/session-store.js'

/**
 * Appends a copied history to a new session in batches of `DEFAULT_READ_BATCH_SIZE` records: a
 * store may take only so much in one append (a database store's statement), and a copy of a long
 * session should not fail for its length. A failure part way leaves the new session partial, so
 * the caller deletes it, as a fork does.
 */
export async function appendCopy(
  store: SessionStore,
  sessionId: string,
  records: readonly HistoryEvent[],
): Promise<void> {
  for (let start = 0; start < records.length; start += DEFAULT_READ_BATCH_SIZE) {
    await store.append(sessionId, records.slice(start, start + DEFAULT_READ_BATCH_SIZE))
  }
}
