import {
  decodeHistoryEvent,
  encodeHistoryEvent,
  type HistoryEvent,
  validateHistoryEvent,
} from '@kode/protocol'
import * as fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import * as arb from './arbitraries.js'

const roundTrips = (arbitrary: fc.Arbitrary<HistoryEvent>) =>
  fc.assert(
    fc.property(arbitrary, (event) => {
      const line = encodeHistoryEvent(event)
      expect(line).not.toContain('\n')
      expect(decodeHistoryEvent(line)).toStrictEqual(event)
    }),
    { numRuns: 300 },
  )

describe('decode(encode(x)) deep-equals x', () => {
  test('system messages', () => roundTrips(arb.systemMessage))
  test('developer messages', () => roundTrips(arb.developerMessage))
  test('user messages', () => roundTrips(arb.userMessage))
  test('assistant messages with every part type', () => roundTrips(arb.assistantMessage))
  test('tool results', () => roundTrips(arb.toolResultMessage))
  test('error records', () => roundTrips(arb.errorRecord))
  test('task metadata records', () => roundTrips(arb.taskMetadataRecord))
  test('interrupt records', () => roundTrips(arb.interruptRecord))
  test('any history event', () => roundTrips(arb.historyEvent))
})

test('every part type round-trips inside an assistant message', () => {
  fc.assert(
    fc.property(arb.part, (part) => {
      const message: HistoryEvent = { role: 'assistant', id: 'a1', createdAt: 1, parts: [part] }
      expect(decodeHistoryEvent(encodeHistoryEvent(message))).toStrictEqual(message)
    }),
    { numRuns: 300 },
  )
})

test('validateHistoryEvent accepts exactly what encode accepts', () => {
  fc.assert(
    fc.property(arb.historyEvent, (event) => {
      expect(validateHistoryEvent(event)).toBe(event)
    }),
  )
})
