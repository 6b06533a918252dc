import type { AssistantMessage, HistoryEvent } from '@kode/protocol'

/**
 * Whether a response is a turn the provider paused, which the model carries on when the history
 * is sent back as it is, ending with that response: Anthropic's `pause_turn` (a long server-tool
 * loop stopped before its answer). Only that wire's own value counts: another wire's raw stop
 * value of the same spelling means nothing here.
 */
export function isPausedTurn(message: AssistantMessage): boolean {
  return message.api === 'anthropic' && message.rawStopReason === 'pause_turn'
}

/** Whether the history's last record is a paused response (see `isPausedTurn`). */
export function endsPaused(history: readonly HistoryEvent[]): boolean {
  const last = history.at(-1)
  return last !== undefined && 'role' in last && last.role === 'assistant' && isPausedTurn(last)
}
