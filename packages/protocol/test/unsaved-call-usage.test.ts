import {
  decodeHistoryEvent,
  type ErrorRecord,
  encodeHistoryEvent,
  type InterruptRecord,
} from '@kode/protocol'
import { describe, expect, test } from 'vitest'

// A model call that failed or was interrupted before any text keeps what its provider billed on
// the record the engine writes for it: optional fields, so the line stays version 1.

const failed: ErrorRecord = {
  type: 'error',
  id: 'e1',
  createdAt: 1,
  message: 'anthropic: Bad block.',
  canRetry: false,
  turn: 'own',
  usage: { inputTokens: 700, outputTokens: 1 },
  costUsd: 0.002,
  model: 'claude-sonnet-4-5',
}
const interrupted: InterruptRecord = {
  type: 'interrupt',
  id: 'i1',
  createdAt: 2,
  turn: 'own',
  usage: { inputTokens: 700 },
  model: 'claude-sonnet-4-5',
}

describe('the usage of a call that left no message, on its error or interrupt record', () => {
  test('is written as version 1, so every release reads it (as an error or interrupt), and read back unchanged', () => {
    for (const record of [failed, interrupted]) {
      const line = encodeHistoryEvent(record)
      expect(line.startsWith('{"v":1,')).toBe(true)
      expect(decodeHistoryEvent(line)).toEqual(record)
    }
  })

  test('read back unchanged with its keys in another order too', () => {
    const { usage, ...rest } = failed
    const line = JSON.stringify({ usage, v: 1, ...rest })
    expect(decodeHistoryEvent(line)).toEqual(failed)
  })

  test('a usage that is not one is refused with its path', () => {
    const line = encodeHistoryEvent(interrupted).replace('"inputTokens":700', '"inputTokens":-1')
    expect(() => decodeHistoryEvent(line)).toThrow(/\/usage/)
  })
})
