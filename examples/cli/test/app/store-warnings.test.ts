import type { StoreWarning } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { describeStoreWarning, storeWarningReporter } from '../../src/store-warnings.js'

const file = '/s/a/history.jsonl'

describe('the store warnings kode tells', () => {
  test('each names the session, the file and what was done', () => {
    const lines = (
      [
        { type: 'failed_append_repaired', sessionId: 'a', file, bytes: 12 },
        {
          type: 'metadata_write_failed',
          sessionId: 'a',
          file: '/s/a/session.json',
          error: new Error('ENOSPC'),
        },
        { type: 'unreadable_session', sessionId: 'b', file: '/s/b/session.json', error: 'bad json' },
      ] satisfies StoreWarning[]
    ).map(describeStoreWarning)
    expect(lines).toEqual([
      `session a: removed 12 bytes of ${file} that an append which failed had left, before appending`,
      'session a: could not write /s/a/session.json (ENOSPC); kode tries again at the next change',
      'session b: cannot be read: bad json',
    ])
  })

  test('a warning the store repeats (a cut-off line, at every read) is told once', () => {
    const told: string[] = []
    const report = storeWarningReporter((line) => told.push(line))
    const torn: StoreWarning = { type: 'torn_tail', sessionId: 'a', file, line: 3, bytes: 5 }
    report(torn)
    report({ ...torn })
    report({ type: 'torn_tail_repaired', sessionId: 'a', file, bytes: 5 })
    expect(told).toEqual([
      `session a: ignored the cut-off last line of ${file} (line 3, 5 bytes), left by a write that did not finish`,
      `session a: removed the cut-off last line of ${file} (5 bytes) before appending`,
    ])
  })

  test('a kind of warning this kode does not know is still told', () => {
    const future = { type: 'future_kind', sessionId: 'a', file } as unknown as StoreWarning
    expect(describeStoreWarning(future)).toContain('future_kind')
  })
})
