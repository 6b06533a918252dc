import {
  type CompactionRecord,
  decodeHistoryEvent,
  encodeHistoryEvent,
  HISTORY_FORMAT_VERSION,
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
