import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  decodeHistoryEvent,
  encodeHistoryEvent,
  HISTORY_FORMAT_VERSION,
  type HistoryEvent,
} from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { expectedV1 } from './corpus-expected-v1.js'
import { expectedV2 } from './corpus-expected-v2.js'
import { expectedV3 } from './corpus-expected-v3.js'

// Files written by each format version. A release must keep decoding every one of them to the
// expected values; a migration that changes a record's shape updates the expectations, never the
// fixtures.
const corpusRoot = join(import.meta.dirname, 'fixtures/history')
const expectations: Record<string, Record<string, HistoryEvent[]>> = {
  v1: expectedV1,
  v2: expectedV2,
  v3: expectedV3,
}

const linesOf = (version: string, file: string) =>
  readFileSync(join(corpusRoot, version, file), 'utf8')
    .split('\n')
    .filter(Boolean)
const decodeAll = (version: string) =>
  readdirSync(join(corpusRoot, version)).flatMap((file) => linesOf(version, file).map(decodeHistoryEvent))

for (const version of readdirSync(corpusRoot)) {
  describe(`history format ${version} corpus`, () => {
    for (const file of readdirSync(join(corpusRoot, version))) {
      const lines = linesOf(version, file)

      test(`${file}: every line decodes to its expected value`, () => {
        const expected = expectations[version]?.[file]
        expect(expected, `no expected values for ${version}/${file}`).toBeDefined()
        expect(lines.map((line) => decodeHistoryEvent(line))).toStrictEqual(expected)
      })

      test(`${file}: re-encoding reproduces every line byte for byte`, () => {
        for (const line of lines) expect(encodeHistoryEvent(decodeHistoryEvent(line))).toBe(line)
      })
    }
  })
}

test('every format version has its corpus, whose lines are stamped with versions up to it', () => {
  const versions = Array.from({ length: HISTORY_FORMAT_VERSION }, (_, i) => `v${i + 1}`)
  expect(readdirSync(corpusRoot).sort()).toEqual(versions)
  for (const version of versions) {
    const stamps = readdirSync(join(corpusRoot, version)).flatMap((file) =>
      linesOf(version, file).map((line) => (JSON.parse(line) as { v: number }).v),
    )
    // Each corpus holds a line of its own version: what that version added, as it wrote it.
    expect(Math.max(...stamps), version).toBe(Number(version.slice(1)))
  }
})

test('every expectation has its corpus file', () => {
  for (const [version, files] of Object.entries(expectations)) {
    expect(readdirSync(join(corpusRoot, version)).sort()).toEqual(Object.keys(files).sort())
  }
})

describe('the v1 corpus covers', () => {
  const decoded = decodeAll('v1')

  test('every role and record type', () => {
    const kinds = new Set(decoded.map((e) => ('role' in e ? e.role : e.type)))
    expect([...kinds].sort()).toEqual(
      ['assistant', 'developer', 'error', 'interrupt', 'system', 'task_metadata', 'tool', 'user'].sort(),
    )
  })

  test('every thinking signature format', () => {
    const formats = new Set(
      decoded.flatMap((e) =>
        'role' in e && e.role === 'assistant'
          ? e.parts.flatMap((p) => (p.type === 'thinking_signature' ? [p.format] : []))
          : [],
      ),
    )
    expect([...formats].sort()).toEqual(['anthropic', 'google', 'openai-responses', 'openrouter'])
  })

  test('every tool result status', () => {
    const statuses = new Set(decoded.flatMap((e) => ('role' in e && e.role === 'tool' ? [e.status] : [])))
    expect([...statuses].sort()).toEqual(['aborted', 'error', 'success'])
  })

  test('fields the schema does not name, on a message, a part, a nested object and a record', () => {
    const [user, assistant, error] = linesOf('v1', 'openrouter-aborted-extras.jsonl')
      .slice(3)
      .map((line) => decodeHistoryEvent(line) as unknown as Record<string, unknown>)
    expect(user).toMatchObject({ clientTag: 'tui-7', parts: [{ cacheControl: { type: 'ephemeral' } }] })
    expect(assistant).toMatchObject({
      routedVia: 'azure',
      usage: { serverToolUse: { webSearchRequests: 0 } },
    })
    expect(error).toMatchObject({ retryAfterMs: 2000 })
  })
})

test('the v2 corpus holds server_tool parts of both formats that write them, block fields Kode does not name kept', () => {
  const parts = decodeAll('v2').flatMap((e) =>
    'role' in e && e.role === 'assistant' ? e.parts.filter((p) => p.type === 'server_tool') : [],
  )
  expect([...new Set(parts.map((p) => p.format))].sort()).toEqual(['anthropic', 'google'])
  expect(parts[0]?.block).toMatchObject({ caller: { type: 'direct' } })
})

test('the v3 corpus holds every record type version 3 added', () => {
  const types = new Set<string>(decodeAll('v3').flatMap((e) => ('role' in e ? [] : [e.type])))
  for (const type of ['compaction', 'approval_request', 'approval_decision', 'tool_progress']) {
    expect(types.has(type), type).toBe(true)
  }
})
