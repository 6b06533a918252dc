import {
  type CompactionRecord,
  decodeHistoryEvent,
  type ErrorRecord,
  encodeHistoryEvent,
  HISTORY_FORMAT_VERSION,
  type InterruptRecord,
} from '@kode/protocol'
import { describe, expect, test } from 'vitest'

const record: CompactionRecord = {
  type: 'compaction',
  id: 'c1',
  createdAt: 1,
  summary: 'The user asked for a review.',
  firstKeptId: 'm7',
  tokensBefore: 9_000,
  tokensAfter: 1_200,
  reason: 'threshold',
  usage: { inputTokens: 8_000, outputTokens: 300 },
  costUsd: 0.01,
  model: 'gpt-4o',
}

describe('the compaction record in the history format', () => {
  test('is written as version 3 and read back unchanged', () => {
    const line = encodeHistoryEvent(record)
    expect(line.startsWith('{"v":3,')).toBe(true)
    expect(HISTORY_FORMAT_VERSION).toBe(3)
    expect(decodeHistoryEvent(line)).toEqual(record)
  })

  test('an unknown reason is refused with its path', () => {
    const line = encodeHistoryEvent(record).replace('"threshold"', '"bored"')
    expect(() => decodeHistoryEvent(line)).toThrow(/\/reason/)
  })
})

describe('a compaction that saved nothing, marked on an error or interrupt record', () => {
  const failed: ErrorRecord = {
    type: 'error',
    id: 'e1',
    createdAt: 1,
    message: 'The summary came back empty.',
    canRetry: false,
    compaction: { reason: 'threshold', tokensBefore: 9_000 },
  }
  const interrupted: InterruptRecord = {
    type: 'interrupt',
    id: 'i1',
    createdAt: 2,
    compaction: { reason: 'manual', tokensBefore: 9_000 },
  }

  test('is written as version 1, so every release reads it (as an error or interrupt), and read back unchanged', () => {
    for (const record of [failed, interrupted]) {
      const line = encodeHistoryEvent(record)
      expect(line.startsWith('{"v":1,')).toBe(true)
      expect(decodeHistoryEvent(line)).toEqual(record)
    }
  })

  test('a marker without its reason is refused with its path', () => {
    const line = encodeHistoryEvent(failed).replace('"reason":"threshold",', '')
    expect(() => decodeHistoryEvent(line)).toThrow(/\/compaction/)
  })
})
