import type { ToolResultMessage } from '@kode/protocol'

/**
 * The sub-agent sessions a tool result links, in the order they started: its `session` UI extra's
 * `sessionId`, then its `moreSessionIds` (a call that ran several sub-agents); none without one.
 */
export function linkedSessions(result: ToolResultMessage): readonly string[] {
  const extra = result.uiExtra
  if (extra?.type !== 'session') return NONE
  return extra.moreSessionIds === undefined ? [extra.sessionId] : [extra.sessionId, ...extra.moreSessionIds]
}

const NONE: readonly string[] = []
