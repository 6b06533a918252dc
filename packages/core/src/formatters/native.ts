import { joinText, toolCallsOf } from '@kode/protocol'
import type { HistoryFormatter } from './history-formatter.js'

/**
 * Native tool calling, the default: the tools are offered as the provider's tool definitions, the
 * model calls them with the provider's tool-call parts, and the history is sent as it is.
 */
export function nativeFormatter(): HistoryFormatter {
  return {
    name: 'native',
    instructions: (tools) => (tools.length > 0 ? { tools } : {}),
    // The calls are the response's own `tool_call` parts: there is nothing to parse.
    parseActions: () => [],
    needsPendingPlaceholder: () => true,
    answerText: (message) => joinText(message.parts),
    isAction: (message) => toolCallsOf(message).length > 0,
    formatAction: (message) => message,
    formatResult: (result) => result,
  }
}
