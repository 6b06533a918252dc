import { type AssistantMessage, type ToolCallPart, toolCallsOf } from '@kode/protocol'
import { actionCallId, type HistoryFormatter } from '../formatters/history-formatter.js'

/**
 * A response as the engine persists it: the actions its formatter finds in its text are appended
 * as `tool_call` parts (the text stays as the model wrote it), so replay, export and the next
 * request all see them as calls. Of an interrupted response, only the actions the formatter wants
 * a placeholder for are recorded. Returns the message itself when there is nothing to add.
 */
export function withActions(formatter: HistoryFormatter, message: AssistantMessage): AssistantMessage {
  let actions = formatter.parseActions(message)
  if (message.stopReason === 'aborted') {
    actions = actions.filter((action) => formatter.needsPendingPlaceholder(action, message))
  }
  if (actions.length === 0) return message
  const first = toolCallsOf(message).length
  const calls = actions.map((action, i): ToolCallPart => {
    const call: ToolCallPart = {
      type: 'tool_call',
      id: actionCallId(message.id, first + i),
      name: action.name,
      argumentsJson: action.argumentsJson,
    }
    if (action.incomplete) call.incomplete = true
    return call
  })
  return { ...message, parts: [...message.parts, ...calls] }
}
