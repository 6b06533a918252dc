import type { HistoryEvent } from '@kode/protocol'
import { sessionCallKey } from '@kode/protocol/helpers'
import { appendCopy } from './copy-records.js'
import type { SessionStore } from './store/session-store.js'

/**
 * The sub-agent sessions that `records` leave waiting for approval, each with the call it asked
 * about: a sub-agent's `approval_request` whose running call (`subAgentCall`) has no result in
 * `records`. Continuing a session decides such a call in the sub-agent's own session, so a fork
 * that shared it would write into its source's sub-agent (and take the source's decision away).
 */
export function waitingSubAgents(records: readonly HistoryEvent[]): Map<string, WaitingSubAgent> {
  const answered = new Set<string>()
  for (const event of records) if ('role' in event && event.role === 'tool') answered.add(event.toolCallId)
  const waiting = new Map<string, WaitingSubAgent>()
  // The sub-agent each relayed request's call waits under, by the call's session and id.
  const asked = new Map<string, string>()
  for (const event of records) {
    if ('role' in event) continue
    if (event.type === 'approval_request' && event.subAgentCall) {
      if (answered.has(event.subAgentCall.toolCallId)) continue
      const { sessionId } = event.subAgentCall
      asked.set(sessionCallKey(event.sessionId, event.toolCallId), sessionId)
      // A request after decisions is a new pause: the sub-agent carried on and asked again.
      const decided = waiting.get(sessionId)?.decided
      waiting.set(sessionId, {
        toolCallId: event.toolCallId,
        decided: decided === undefined || decided.size > 0 ? new Set() : decided,
      })
    } else if (event.type === 'approval_decision') {
      const sessionId = asked.get(sessionCallKey(event.sessionId, event.toolCallId))
      if (sessionId !== undefined) waiting.get(sessionId)?.decided.add(event.toolCallId)
    }
  }
  return waiting
}

/** A sub-agent the records leave waiting: the last call it asked about, and those already decided. */
export interface WaitingSubAgent {
  toolCallId: string
  /** The calls the records hold a decision for: the sub-agent had carried on with them. */
  decided: Set<string>
}

/**
 * Copies each sub-agent session `records` leave waiting (and, in turn, the ones those leave
 * waiting) into a new session under `parentId`, cut at the end of the task in which it asked: what
 * it held when the records were written, even if its source has carried on since. Returns the
 * copies by source session id; a sub-agent missing from the store is not copied. Every session
 * created is added to `created`, so a caller that fails can delete them.
 */
export async function copyWaitingSubAgents(
  store: SessionStore,
  records: readonly HistoryEvent[],
  parentId: string,
  created: string[],
  copies: Map<string, string> = new Map(),
): Promise<Map<string, string>> {
  for (const [sessionId, waiting] of waitingSubAgents(records)) {
    if (copies.has(sessionId)) continue
    const info = await store.info(sessionId)
    if (!info) continue
    const history = cutAtPause(await store.read(sessionId), waiting)
    const copy = await store.create({
      parentSessionId: parentId,
      ...(info.title !== undefined ? { title: info.title } : {}),
      ...(info.subAgent !== undefined ? { subAgent: info.subAgent } : {}),
      ...(info.model !== undefined ? { model: info.model } : {}),
      ...(info.provider !== undefined ? { provider: info.provider } : {}),
    })
    created.push(copy.id)
    copies.set(sessionId, copy.id)
    await copyWaitingSubAgents(store, history, copy.id, created, copies)
    await appendCopy(store, copy.id, relink(history, copies))
  }
  return copies
}

/** The records with their approval records pointing at the copied sessions; the rest as they were. */
export function relink(
  records: readonly HistoryEvent[],
  copies: ReadonlyMap<string, string>,
): HistoryEvent[] {
  if (copies.size === 0) return [...records]
  return records.map((event) => {
    if ('role' in event) return event
    switch (event.type) {
      case 'approval_request': {
        const { sessionId, subAgentCall } = event
        if (sessionId === undefined && subAgentCall === undefined) return event
        return {
          ...event,
          ...(sessionId !== undefined ? { sessionId: copies.get(sessionId) ?? sessionId } : {}),
          ...(subAgentCall !== undefined
            ? {
                subAgentCall: {
                  ...subAgentCall,
                  sessionId: copies.get(subAgentCall.sessionId) ?? subAgentCall.sessionId,
                },
              }
            : {}),
        }
      }
      case 'approval_decision':
        if (event.sessionId === undefined) return event
        return { ...event, sessionId: copies.get(event.sessionId) ?? event.sessionId }
      case 'error':
      case 'interrupt':
      case 'task_metadata':
      case 'compaction':
      case 'tool_progress':
        return event
      default: {
        const unknown: never = event
        return unknown
      }
    }
  })
}

/**
 * A sub-agent's records as its parent's records saw them: up to the end of the task in which it
 * asked about `toolCallId` (the `task_metadata` after that request), or, when the parent's records
 * already hold decisions on its calls, up to its own record of the last of them (it had carried
 * on, and what followed was still running). The whole history when the request or the task's end
 * is not there.
 */
function cutAtPause(
  history: readonly HistoryEvent[],
  { toolCallId, decided }: WaitingSubAgent,
): readonly HistoryEvent[] {
  if (decided.size > 0) {
    const last = history.findLastIndex(
      (e) => !('role' in e) && e.type === 'approval_decision' && decided.has(e.toolCallId),
    )
    if (last !== -1) return history.slice(0, last + 1)
  }
  const asked = history.findIndex(
    (e) => !('role' in e) && e.type === 'approval_request' && e.toolCallId === toolCallId,
  )
  if (asked === -1) return history
  for (let i = asked + 1; i < history.length; i++) {
    const event = history[i]!
    if (!('role' in event) && event.type === 'task_metadata') return history.slice(0, i + 1)
  }
  return history
}
