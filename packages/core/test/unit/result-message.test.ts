import {
  decodeHistoryEvent,
  encodeHistoryEvent,
  roundTripHistoryEvent,
  type ToolCallPart,
  type ToolResultMessage,
} from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { errorOutcome, resultMessage, type ToolOutcome } from '../../src/tools/tool-outcome.js'

const call: ToolCallPart = { type: 'tool_call', id: 'c1', name: 'lookup', argumentsJson: '{}' }
const stamp = { id: 'm1', createdAt: 1_700_000_000_000 }

/** What the store holds for `message`: its JSON written and read back. */
const stored = (message: ToolResultMessage) => decodeHistoryEvent(encodeHistoryEvent(message))

describe('a tool result message is what the store holds', () => {
  const texts = [
    'found: 42',
    '',
    'quotes " and \\ backslashes, \n newlines, \u0000 controls',
    'a lone surrogate \ud800 and an emoji 😀',
  ]
  test.each(texts)('text result %j: the same as its JSON round trip', (text) => {
    const outcome: ToolOutcome = { status: 'success', outputText: text, parts: [] }
    const message = resultMessage(call, outcome, 100_000, stamp)
    expect(message).toEqual(stored(message))
    expect(message).toEqual(roundTripHistoryEvent({ ...message }))
    expect(Object.keys(message)).toEqual(Object.keys(stored(message)))
    // Its parts are its own, not the outcome's.
    expect(message.parts).not.toBe(outcome.parts)
  })

  test('an error result, a capped text and a -0 clock reading', () => {
    const capped = resultMessage(call, errorOutcome('x'.repeat(500)), 100, stamp)
    expect(capped.status).toBe('error')
    expect(capped.outputText.length).toBeLessThan(500)
    expect(capped).toEqual(stored(capped))
    const negativeZero = resultMessage(call, errorOutcome('e'), 100, { id: 'm2', createdAt: -0 })
    expect(Object.is(negativeZero.createdAt, 0)).toBe(true)
  })

  test('a result with parts is read back from its JSON (undefined fields dropped)', () => {
    const part = {
      type: 'image_url',
      url: 'https://example.test/a.png',
      note: undefined,
    } as ToolOutcome['parts'][number]
    const outcome: ToolOutcome = { status: 'success', outputText: 'see parts', parts: [part] }
    const message = resultMessage(call, outcome, 100_000, stamp)
    expect(message).toEqual(stored(message))
    expect(message.parts[0]).not.toBe(part)
    expect(Object.keys(message.parts[0]!)).toEqual(['type', 'url'])
  })

  test('a result that is no valid record is reported as an invalid result, as before', () => {
    const bad = resultMessage(call, { status: 'success', outputText: 'ok', parts: [] }, 100_000, {
      id: 'm3',
      createdAt: Number.NaN,
    })
    expect(bad.status).toBe('error')
    expect(bad.outputText).toMatch(/^Tool "lookup" returned an invalid result: /)
  })
})
