import type { HistoryEvent } from '@kode/protocol'
import { deniedByNewMessage } from './approval.js'

/**
 * Where the task `continue` carries on began in `history`: right after the last `task_metadata`
 * that ended a task. Its own pauses for approval (`task_metadata` with reason `awaiting_approval`)
 * did not end it; a pause that a new user message superseded did, and the records after it are a
 * new task's. Those open (after a changed system prompt) with the denials the new message made
 * (`decidedBy: 'new_message'`, see `deniedByNewMessage`), where a continuation opens with the
 * host's decisions (whatever their reason says). (A new message
 * after a `continue` whose process died once it recorded its decisions is not told apart: its
 * task is counted with the paused one.)
 */
export function continuedTaskStart(history: readonly HistoryEvent[]): number {
  for (let i = history.length - 1; i >= 0; i--) {
    const record = history[i]!
    if ('role' in record || record.type !== 'task_metadata') continue
    if (record.reason !== 'awaiting_approval' || superseded(history, i + 1)) return i + 1
  }
  return 0
}

/** Whether the records from `from` on open with a denial a new user message made. */
function superseded(history: readonly HistoryEvent[], from: number): boolean {
  for (let i = from; i < history.length; i++) {
    const record = history[i]!
    if ('role' in record && record.role === 'system') continue
    return !('role' in record) && record.type === 'approval_decision' && deniedByNewMessage(record)
  }
  return false
}
