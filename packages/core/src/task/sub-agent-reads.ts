import type { HistoryEvent } from '@kode/protocol'
import type { SessionInfo, SessionStore } from '@kode/session'

/**
 * What the check before a task (`checkStoppedSubAgentsFree`) read of the sub-agent sessions a dead
 * process left, kept for the settling that follows in the same run, so that each list and each
 * sub-agent history is read from the store once. Settling takes each result once; what the check
 * did not read is read then. Nothing of the run writes those sessions in between: the check finds
 * them free, and only settling them writes them.
 */
export class SubAgentReads {
  readonly #lists = new Map<string, SessionInfo[]>()
  readonly #histories = new Map<string, HistoryEvent[]>()

  /** Lists the sessions whose parent is `parentSessionId` (the store may list more), keeping them. */
  async keepList(store: SessionStore, parentSessionId: string): Promise<SessionInfo[]> {
    const infos = await store.list({ parentSessionId })
    this.#lists.set(parentSessionId, infos)
    return infos
  }

  /** The list `keepList` kept for `parentSessionId`, once; else lists now. */
  takeList(store: SessionStore, parentSessionId: string): Promise<SessionInfo[]> {
    return take(this.#lists, parentSessionId, () => store.list({ parentSessionId }))
  }

  /** Reads the session's history, keeping it. */
  async keepHistory(store: SessionStore, sessionId: string): Promise<HistoryEvent[]> {
    const history = await store.read(sessionId)
    this.#histories.set(sessionId, history)
    return history
  }

  /** The history `keepHistory` kept for `sessionId`, once; else reads it now. */
  takeHistory(store: SessionStore, sessionId: string): Promise<HistoryEvent[]> {
    return take(this.#histories, sessionId, () => store.read(sessionId))
  }
}

function take<T>(kept: Map<string, T>, key: string, read: () => Promise<T>): Promise<T> {
  const value = kept.get(key)
  if (value === undefined) return read()
  kept.delete(key)
  return Promise.resolve(value)
}
