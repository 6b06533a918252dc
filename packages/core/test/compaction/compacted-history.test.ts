import { compactedHistory } from '@kode/core'
import type { CompactionRecord, HistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'

const text = (t: string) => [{ type: 'text' as const, text: t }]
const user = (id: string): HistoryEvent => ({ role: 'user', id, createdAt: 1, parts: text(id) })
const assistant = (id: string): HistoryEvent => ({
  role: 'assistant',
  id,
  createdAt: 1,
  parts: text(id),
  stopReason: 'stop',
})
const compaction = (id: string, firstKeptId: string, summary: string): CompactionRecord => ({
  type: 'compaction',
  id,
  createdAt: 1,
  summary,
  firstKeptId,
  reason: 'manual',
  tokensBefore: 100,
  tokensAfter: 10,
})

describe('compactedHistory', () => {
  // A second compaction may keep records from before the first one: its kept part then spans the
  // first compaction's record, which is no part of the model's view.
  const history: HistoryEvent[] = [
    user('u1'),
    assistant('a1'),
    compaction('c1', 'a1', 'first'),
    user('u2'),
    assistant('a2'),
    compaction('c2', 'a1', 'second'),
    user('u3'),
  ]

  test('the view holds no earlier compaction record, so reading the view again finds the same view', () => {
    const view = compactedHistory(history)
    expect(view.records.map((r) => r.id)).toEqual(['c2', 'a1', 'u2', 'a2', 'u3'])
    expect(view.compaction?.id).toBe('c2')
    expect(view.freshFrom).toBe(4)
    // A host that derives the view of a view gets it back unchanged.
    expect(compactedHistory(view.records).records).toEqual(view.records)
  })
})
