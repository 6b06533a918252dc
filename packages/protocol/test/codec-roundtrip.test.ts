import {
  decodeHistoryEvent,
  encodeHistoryEvent,
  type HistoryEvent,
  roundTripHistoryEvent,
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

describe('roundTripHistoryEvent', () => {
  /** What the codec makes of `value`: the event read back, or the error's text. */
  const outcome = (run: () => HistoryEvent) => {
    try {
      return { event: run() }
    } catch (error) {
      return { error: String(error) }
    }
  }

  test('is decode(encode(x)) for valid events, toJSON and getters included', () => {
    fc.assert(
      fc.property(arb.historyEvent, (event) => {
        expect(roundTripHistoryEvent(event)).toStrictEqual(decodeHistoryEvent(encodeHistoryEvent(event)))
      }),
      { numRuns: 300 },
    )
    const withToJson = {
      role: 'user',
      id: 'u1',
      createdAt: 1,
      parts: [{ type: 'text', text: 'x', toJSON: () => ({ type: 'text', text: 'as written' }) }],
    } as unknown as HistoryEvent
    expect(roundTripHistoryEvent(withToJson)).toStrictEqual({
      role: 'user',
      id: 'u1',
      createdAt: 1,
      parts: [{ type: 'text', text: 'as written' }],
    })
  })

  test('throws what encode throws, for invalid and unwritable values', () => {
    const cyclic: Record<string, unknown> = { role: 'user', id: 'u1', createdAt: 1, parts: [] }
    cyclic.self = cyclic
    const values: unknown[] = [
      cyclic,
      { role: 'user', id: 'u1', createdAt: 1, parts: [], v: 2 },
      { role: 'tool', id: 't1', createdAt: 1, parts: [{ type: 'text', text: 'no' }] },
      { role: 'user', id: 'u1', createdAt: 1n, parts: [] },
      { type: 'nope', id: 'r1', createdAt: 1 },
    ]
    for (const value of values) {
      const event = value as HistoryEvent
      const read = outcome(() => roundTripHistoryEvent(event))
      expect(read.error).toBeDefined()
      expect(read).toEqual(outcome(() => decodeHistoryEvent(encodeHistoryEvent(event))))
    }
  })
})
