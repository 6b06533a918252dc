import type { HistoryEvent } from '@kode/protocol'
import type { SubSessionHistories } from '@kode/session'

/** The call that started a sub-agent: its session (the main one or another sub-agent's) and its id. */
export interface ParentCall {
  sessionId: string
  toolCallId: string
}

/** For each sub-agent session a replay shows, the call that started it. */
export type SubAgentLinks = ReadonlyMap<string, ParentCall>

/**
 * Which call started each sub-agent session, read from the stored histories: a tool result that
 * links the sessions its call ran (`uiExtra: { type: 'session' }`), and, for a sub-agent still
 * paused, the `approval_request` its parent recorded (`subAgentCall`). A replay has no
 * `task_start` to carry that link (it invents no task boundaries), so the page is sent this map
 * beside it, to show a paused sub-agent inside its call before the call has a result.
 */
export function subAgentLinks(
  history: readonly HistoryEvent[],
  sessionId: string,
  subSessions: SubSessionHistories,
): SubAgentLinks {
  const links = new Map<string, ParentCall>()
  const add = (child: string, parent: ParentCall) => {
    // The first link found wins; a session never links itself.
    if (child !== parent.sessionId && !links.has(child)) links.set(child, parent)
  }
  for (const [owner, records] of [[sessionId, history] as const, ...subSessions]) {
    for (const record of records) {
      if ('role' in record) {
        if (record.role !== 'tool' || record.uiExtra?.type !== 'session') continue
        const { sessionId: first, moreSessionIds = [] } = record.uiExtra
        for (const child of [first, ...moreSessionIds])
          add(child, { sessionId: owner, toolCallId: record.toolCallId })
      } else if (record.type === 'approval_request' && record.subAgentCall) {
        add(record.subAgentCall.sessionId, { sessionId: owner, toolCallId: record.subAgentCall.toolCallId })
      }
    }
  }
  return links
}

/** Whether `next` has a link `shown` lacks (or names another call for a session). */
export function addsLinks(shown: SubAgentLinks, next: SubAgentLinks): boolean {
  for (const [child, parent] of next) {
    const known = shown.get(child)
    if (known?.sessionId !== parent.sessionId || known.toolCallId !== parent.toolCallId) return true
  }
  return false
}

/** The links as a `sub-agents` frame carries them: `{ "<sub-agent session>": { sessionId, toolCallId } }`. */
export function linksJson(links: SubAgentLinks): Record<string, ParentCall> {
  // fromEntries defines own properties, so a session id such as `__proto__` stays a key.
  return Object.fromEntries(links)
}
