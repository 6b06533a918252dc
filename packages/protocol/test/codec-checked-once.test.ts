import {
  type AssistantMessage,
  CodecError,
  decodeHistoryEvent,
  encodeHistoryEvent,
  type HistoryEvent,
  roundTripHistoryEvent,
} from '@kode/protocol'
import * as fc from 'fast-check'
import { afterEach, describe, expect, test, vi } from 'vitest'
import * as arb from './arbitraries.js'

/** How many times `run` parses JSON: each check of a record reads its text back once. */
function parsesDuring(run: () => void): number {
  const parse = vi.spyOn(JSON, 'parse')
  try {
    run()
    return parse.mock.calls.length
  } finally {
    parse.mockRestore()
  }
}

afterEach(() => vi.restoreAllMocks())

describe('a record roundTripHistoryEvent returned is checked once', () => {
  test('encoding it writes the line encoding the original writes', () => {
    fc.assert(
      fc.property(arb.historyEvent, (event) => {
        expect(encodeHistoryEvent(roundTripHistoryEvent(event))).toBe(encodeHistoryEvent(event))
      }),
      { numRuns: 300 },
    )
  })

  test('encoding it does not read its text back again; encoding a copy of it does', () => {
    const event: HistoryEvent = {
      role: 'tool',
      id: 't1',
      createdAt: 1,
      toolCallId: 'c1',
      toolName: 'lookup',
      status: 'success',
      outputText: 'found',
      parts: [],
    }
    const checked = roundTripHistoryEvent(event)
    expect(parsesDuring(() => encodeHistoryEvent(checked))).toBe(0)
    expect(parsesDuring(() => encodeHistoryEvent({ ...checked }))).toBe(1)
    expect(parsesDuring(() => encodeHistoryEvent(structuredClone(checked)))).toBe(1)
    expect(parsesDuring(() => encodeHistoryEvent(event))).toBe(1)
  })

  test('changed into something invalid after its check, it is refused as any record is', () => {
    const checked = roundTripHistoryEvent({ role: 'user', id: 'u1', createdAt: 1, parts: [] })
    ;(checked as { createdAt: unknown }).createdAt = 'yesterday'
    expect(() => encodeHistoryEvent(checked)).toThrow(CodecError)
    const withV = roundTripHistoryEvent({ role: 'user', id: 'u2', createdAt: 1, parts: [] })
    ;(withV as unknown as { v: number }).v = 9
    expect(() => encodeHistoryEvent(withV)).toThrow(/reserved for the format version/)
  })

  test('changed validly after its check, it is written as it is now, with the version it now needs', () => {
    const message: AssistantMessage = { role: 'assistant', id: 'a1', createdAt: 1, parts: [] }
    const checked = roundTripHistoryEvent(message) as AssistantMessage
    expect(encodeHistoryEvent(checked)).toMatch(/^\{"v":1,/)
    checked.parts.push({ type: 'server_tool', format: 'anthropic', block: { type: 'server_tool_use' } })
    const line = encodeHistoryEvent(checked)
    expect(line).toMatch(/^\{"v":2,/)
    expect(decodeHistoryEvent(line)).toStrictEqual(checked)
  })

  test('a getter that answers differently on the second read is checked in full', () => {
    let reads = 0
    const record = {
      role: 'user',
      id: 'u1',
      createdAt: 1,
      get parts() {
        reads++
        return reads === 1 ? [] : 'not parts'
      },
    } as unknown as HistoryEvent
    const checked = roundTripHistoryEvent(record)
    // The returned record is plain data; the getter's owner was never stamped.
    expect(() => encodeHistoryEvent(record)).toThrow(CodecError)
    expect(encodeHistoryEvent(checked)).toBe('{"v":1,"role":"user","id":"u1","createdAt":1,"parts":[]}')
  })
})
