import {
  checkEventOrder,
  decodeHistoryEvent,
  type Event,
  encodeHistoryEvent,
  type HistoryEvent,
  toolCallsOf,
  validateEvent,
} from '@kode/protocol'
import { toProviderMessages } from '@kode/protocol/helpers'
import { expect } from 'vitest'

/** Every event is valid by the protocol's schema, and the sequence passes seed 001's ordering rules. */
export function expectOrdered(events: readonly Event[]): void {
  for (const event of events) validateEvent(JSON.parse(JSON.stringify(event)))
  expect(checkEventOrder(events)).toEqual([])
}

/**
 * The history is valid input for the next model call as it stands: every record round-trips
 * through the codec, and every tool call of an assistant message is answered by exactly one
 * persisted result before the next user or assistant message (none left for the provider view to
 * make up), and no result answers a call that was not made.
 */
export function expectValidHistory(history: readonly HistoryEvent[]): void {
  for (const record of history) expect(decodeHistoryEvent(encodeHistoryEvent(record))).toEqual(record)
  let open = new Set<string>()
  for (const record of history) {
    if (!('role' in record)) continue
    if (record.role === 'tool') {
      expect(open.has(record.toolCallId), `result ${record.toolCallId} answers an open call`).toBe(true)
      open.delete(record.toolCallId)
      continue
    }
    if (record.role === 'assistant' || record.role === 'user') {
      expect([...open], 'calls left without a result').toEqual([])
      open = record.role === 'assistant' ? new Set(toolCallsOf(record).map((c) => c.id)) : new Set()
    }
  }
  expect([...open], 'calls left without a result').toEqual([])
  const synthetic = toProviderMessages(history).filter((m) => m.id.endsWith(':missing-result'))
  expect(synthetic).toEqual([])
}
