import { type HistoryEvent, joinText } from '@kode/protocol'

/** The first non-empty line of the first user message with text, for naming a session. */
export function firstPrompt(history: readonly HistoryEvent[]): string | undefined {
  for (const event of history) {
    if (!('role' in event) || event.role !== 'user') continue
    const line = joinText(event.parts).trim().split('\n')[0]?.trim()
    if (line) return line
  }
  return undefined
}
