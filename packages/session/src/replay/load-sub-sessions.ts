import type { HistoryEvent, ReplayEvent } from '@kode/protocol'
import { SessionError } from '../errors.js'
import { isValidSessionId } from '../session-id.js'
import type { SessionStore } from '../store/session-store.js'
import { deriveReplayEvents } from './derive-replay.js'

/**
 * Loads every sub-agent session a history links (tool results with
 * `uiExtra: { type: 'session', sessionId }`), and the sessions those link, from a store. A link
 * to a session that is missing (deleted) or whose id is not a valid session id is skipped.
 */
export async function loadSubSessions(
  store: SessionStore,
  history: readonly HistoryEvent[],
): Promise<Map<string, HistoryEvent[]>> {
  const loaded = new Map<string, HistoryEvent[]>()
  let frontier: (readonly HistoryEvent[])[] = [history]
  while (frontier.length > 0) {
    const ids = new Set<string>()
    for (const events of frontier) {
      for (const id of linkedSessions(events)) if (!loaded.has(id)) ids.add(id)
    }
    const children = await Promise.all(
      [...ids].map(async (id) => [id, await readIfPresent(store, id)] as const),
    )
    frontier = []
    for (const [id, events] of children) {
      if (!events) continue
      loaded.set(id, events)
      frontier.push(events)
    }
  }
  return loaded
}

/** Reads a session from a store and derives its replay, sub-agent sessions included (see `deriveReplayEvents`). */
export async function replaySession(store: SessionStore, sessionId: string): Promise<ReplayEvent[]> {
  const history = await store.read(sessionId)
  const subSessions = await loadSubSessions(store, history)
  subSessions.delete(sessionId)
  return deriveReplayEvents(history, { sessionId, subSessions })
}

function* linkedSessions(history: readonly HistoryEvent[]): Generator<string> {
  for (const event of history) {
    if ('role' in event && event.role === 'tool' && event.uiExtra?.type === 'session') {
      if (isValidSessionId(event.uiExtra.sessionId)) yield event.uiExtra.sessionId
    }
  }
}

async function readIfPresent(store: SessionStore, sessionId: string): Promise<HistoryEvent[] | undefined> {
  try {
    return await store.read(sessionId)
  } catch (error) {
    if (SessionError.is(error) && error.code === 'session_not_found') return undefined
    throw error
  }
}
