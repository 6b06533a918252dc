import type { HistoryEvent } from '../history.js'

/**
 * The oldest format version that can hold `event`: a line is written with it, so a release that
 * reads only an older version still reads every line that needs nothing newer, and refuses (with
 * a clear error) only the lines that do.
 * - 1: the first format.
 * - 2: adds the `server_tool` part of assistant messages.
 * - 3: adds the `compaction`, `approval_request`, `approval_decision` and `tool_progress` records.
 */
export function formatVersionOf(event: HistoryEvent): number {
  if (!('role' in event)) {
    if (
      event.type === 'compaction' ||
      event.type === 'approval_request' ||
      event.type === 'approval_decision' ||
      event.type === 'tool_progress'
    )
      return 3
  }
  if ('role' in event && event.role === 'assistant') {
    for (const part of event.parts) if (part.type === 'server_tool') return 2
  }
  return 1
}
