import type { Event, HistoryEvent } from '@kode/protocol'

/**
 * One line per event with its key fields, runs of deltas of one stream merged into one line (the
 * split of deltas is the wire's business), events of other sessions prefixed `[sessionId]`. The
 * budget reported before each model call (`context_usage` with `estimated`) is left out unless
 * `withBudget`: its figures depend on the whole request, and `context-budget.test.ts` asserts them.
 */
export function summarize(
  events: readonly Event[],
  mainSessionId?: string,
  options: { withBudget?: boolean } = {},
): string[] {
  const main = mainSessionId ?? events[0]?.sessionId
  const lines: string[] = []
  let last: { type: string; sessionId: string; index: number } | undefined
  for (const event of events) {
    if (event.type === 'context_usage' && event.estimated && !options.withBudget) continue
    const prefix = event.sessionId === main ? '' : `[${event.sessionId}] `
    if (event.type === 'thinking_delta' || event.type === 'assistant_text_delta') {
      if (
        last &&
        last.type === event.type &&
        last.sessionId === event.sessionId &&
        last.index === lines.length - 1
      ) {
        lines[last.index] += event.content
        continue
      }
      lines.push(`${prefix}${event.type === 'thinking_delta' ? 'thinking' : 'text'}: ${event.content}`)
      last = { type: event.type, sessionId: event.sessionId, index: lines.length - 1 }
      continue
    }
    last = undefined
    lines.push(prefix + describeEvent(event))
  }
  return lines
}

function describeEvent(event: Event): string {
  switch (event.type) {
    case 'task_start':
      return event.subAgentState ? `task_start sub-agent ${event.subAgentState.name}` : 'task_start'
    case 'task_finish':
      return `task_finish ${event.reason}: ${event.taskResult}`
    case 'user_message':
      return `user_message${modeOf(event)}: ${event.content}${event.images ? ` (+${event.images.length} images)` : ''}`
    case 'tool_call_start':
      return `tool_call_start ${event.toolCallId} ${event.toolName}`
    case 'response_complete':
      return `response_complete: ${event.content}${event.thinkingText ? ` | thinking: ${event.thinkingText}` : ''}`
    case 'usage':
      return `usage ${event.usage.inputTokens}/${event.usage.outputTokens}`
    case 'context_usage':
      return event.estimated
        ? `context_usage estimated ${event.contextTokens}/${event.inputLimit} of ${event.contextWindow}`
        : `context_usage ${event.contextTokens}/${event.contextWindow}`
    case 'tool_call':
      return `tool_call ${event.toolCallId} ${event.toolName} ${event.arguments}`
    case 'tool_progress':
      return `tool_progress ${event.toolCallId}: ${event.message}${event.siblingToolCallIds ? ` (siblings ${event.siblingToolCallIds.join(',') || '-'})` : ''}`
    case 'tool_approval_request':
      return `tool_approval_request ${event.toolCallId} ${event.toolName} ${event.arguments}`
    case 'tool_approval_decision':
      return `tool_approval_decision ${event.toolCallId} ${event.approved ? 'approved' : 'denied'}${event.reason ? `: ${event.reason}` : ''}`
    case 'tool_result':
      return `tool_result ${event.toolCallId} ${event.status}${event.isLastInTurn ? ' (last)' : ''}: ${event.result}`
    case 'todo_change':
      return `todo_change ${event.todos.map((t) => `${t.content}=${t.status}`).join(', ')}`
    case 'error':
      return `error${event.canRetry ? ' (retrying)' : ''}: ${event.errorMessage}`
    case 'task_metadata':
      return `task_metadata turns=${event.metadata.main.turnCount} subAgents=${event.metadata.subAgents.length}`
    case 'assistant_image_delta':
      return `assistant_image_delta ${event.filePath ?? event.url}`
    default:
      return event.type
  }
}

/**
 * The summarized events of a turn whose scripted response only streams `text` (usage 100/20 in a
 * 128k window), up to its tool events.
 */
export const textResponse = (text: string): string[] => [
  'turn_start',
  'assistant_text_start',
  `text: ${text}`,
  'assistant_text_end',
  `response_complete: ${text}`,
  'usage 100/20',
  'context_usage 120/128000',
]

/** One line per history record with its key fields. */
export function summarizeHistory(history: readonly HistoryEvent[]): string[] {
  return history.map((record) => {
    if (!('role' in record)) {
      switch (record.type) {
        case 'error':
          return `error${record.retry ? ' (retry)' : ''}: ${record.message}`
        case 'task_metadata':
          return `task_metadata turns=${record.metadata.main.turnCount} subAgents=${record.metadata.subAgents.length}`
        case 'interrupt':
          return 'interrupt'
        case 'approval_request': {
          const via = record.subAgentCall
            ? ` in ${record.sessionId} via ${record.subAgentCall.toolCallId}/${record.subAgentCall.sessionId}`
            : ''
          return `approval_request ${record.toolCallId} ${record.toolName} ${record.arguments}${via}`
        }
        case 'approval_decision':
          return `approval_decision ${record.toolCallId}${record.sessionId ? ` in ${record.sessionId}` : ''} ${record.approved ? 'approved' : 'denied'}${record.reason ? `: ${record.reason}` : ''}`
        case 'tool_progress':
          return `tool_progress ${record.toolCallId}: ${record.message} (siblings ${record.siblingToolCallIds.join(',') || '-'})`
        default:
          return 'unknown record'
      }
    }
    switch (record.role) {
      case 'system':
      case 'developer':
      case 'user':
        return `${record.role}${record.role === 'user' ? modeOf(record) : ''}: ${record.parts.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`)).join('')}`
      case 'assistant': {
        const parts = record.parts.map((part) => {
          switch (part.type) {
            case 'text':
              return `text "${part.text}"`
            case 'thinking_text':
              return `thinking "${part.text}"`
            case 'tool_call':
              return `call ${part.id} ${part.name} ${part.argumentsJson}${part.incomplete ? ' (incomplete)' : ''}`
            default:
              return part.type
          }
        })
        const flags = record.isApiError ? ' api-error' : ''
        return `assistant ${record.stopReason ?? '-'}${flags}: ${parts.join(' | ')}`
      }
      case 'tool':
        return `tool ${record.toolCallId} ${record.status}: ${record.outputText}`
      default:
        return 'unknown message'
    }
  })
}

/** ` [mode <name>: <context>]` for a user message or event sent in a mode, else nothing. */
function modeOf(source: { mode?: string | undefined; modeContext?: string | undefined }): string {
  if (source.mode === undefined) return ''
  return ` [mode ${source.mode}${source.modeContext !== undefined ? `: ${source.modeContext}` : ''}]`
}
