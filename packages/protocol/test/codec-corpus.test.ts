import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeHistoryEvent, encodeHistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'

// Files written by each format version. A release must keep decoding every one of them; a
// migration that changes a record's shape updates the expectations here, never the fixtures.
const corpusRoot = join(import.meta.dirname, 'fixtures/history')

for (const version of readdirSync(corpusRoot)) {
  describe(`history format ${version} corpus`, () => {
    for (const file of readdirSync(join(corpusRoot, version))) {
      const lines = readFileSync(join(corpusRoot, version, file), 'utf8')
        .split('\n')
        .filter(Boolean)

      test(`${file}: every line decodes`, () => {
        const decoded = lines.map((line) => decodeHistoryEvent(line))
        expect(decoded).toHaveLength(lines.length)
        for (const event of decoded) expect(event).not.toHaveProperty('v')
      })

      test(`${file}: re-encoding reproduces every line byte for byte`, () => {
        for (const line of lines) expect(encodeHistoryEvent(decodeHistoryEvent(line))).toBe(line)
      })
    }
  })
}

test('the v1 corpus covers every role and record type', () => {
  const lines = readFileSync(join(corpusRoot, 'v1/session-mixed.jsonl'), 'utf8').split('\n').filter(Boolean)
  const kinds = new Set(lines.map((l) => decodeHistoryEvent(l)).map((e) => ('role' in e ? e.role : e.type)))
  expect([...kinds].sort()).toEqual(
    ['assistant', 'developer', 'error', 'interrupt', 'system', 'task_metadata', 'tool', 'user'].sort(),
  )
})
