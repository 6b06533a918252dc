import { type Event, joinText } from '@kode/protocol'
import { argumentSummary, clip } from './format.js'

/** The events the main session shows as a one-line notice: neither text nor a tool's own lines. */
export type NoticeEvent = Extract<
  Event,
  {
    type:
      | 'developer_message'
      | 'tool_approval_request'
      | 'tool_approval_decision'
      | 'compaction_start'
      | 'compaction_end'
  }
>

/** What the notice line of such an event says. */
export function noticeText(event: NoticeEvent): string {
  switch (event.type) {
    case 'developer_message':
      return `developer: ${clip(joinText(event.item.parts), 100)}`
    case 'tool_approval_request':
      return `${event.toolName} ${argumentSummary(event.arguments)} needs your approval`
    case 'tool_approval_decision':
      return `${event.toolName}: ${event.approved ? 'approved' : 'denied'}${event.reason ? ` (${event.reason})` : ''}`
    case 'compaction_start':
      return `Compacting the context (about ${event.tokensBefore} tokens)…`
    case 'compaction_end':
      return event.compacted
        ? `Context compacted: about ${event.tokensBefore} → ${event.tokensAfter ?? 0} tokens`
        : `Context not compacted${event.errorMessage ? `: ${event.errorMessage}` : ''}`
    default: {
      const unknown: never = event
      throw new Error(`no notice for ${JSON.stringify(unknown)}`)
    }
  }
}
