import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import {
  checkEventOrder,
  decodeHistoryEvent,
  encodeEvent,
  encodeHistoryEvent,
  type HistoryEvent,
} from '@kode/protocol'
import { deriveReplayEvents, replaySession } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { beforeAll, describe, expect, test } from 'vitest'
import { generateSession } from '../../../test/history/generate-session.js'

// Golden test: a long generated session (hundreds of turns, tools, interrupts, images, errors,
// sub-agents) and its expected replay are committed files. Regenerate both after an intended
// change with `KODE_UPDATE_GOLDEN=1 pnpm vitest run replay-golden`, and review the diff.

const dir = join(import.meta.dirname, 'fixtures/golden')
const SESSION_ID = 'golden'
const readLines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
const writeLines = (file: string, lines: string[]) => writeFileSync(file, `${lines.join('\n')}\n`)

function loadFixture(): { history: HistoryEvent[]; subSessions: Map<string, HistoryEvent[]> } {
  const history = readLines(join(dir, 'history.jsonl')).map(decodeHistoryEvent)
  const subSessions = new Map(
    readdirSync(join(dir, 'sub-sessions')).map((file) => [
      basename(file, '.jsonl'),
      readLines(join(dir, 'sub-sessions', file)).map(decodeHistoryEvent),
    ]),
  )
  return { history, subSessions }
}

beforeAll(() => {
  if (process.env.KODE_UPDATE_GOLDEN !== '1') return
  const { history, subSessions } = generateSession({ seed: 2024, tasks: 120, sessionId: SESSION_ID })
  rmSync(join(dir, 'sub-sessions'), { recursive: true, force: true })
  mkdirSync(join(dir, 'sub-sessions'), { recursive: true })
  writeLines(join(dir, 'history.jsonl'), history.map(encodeHistoryEvent))
  for (const [id, events] of subSessions) {
    writeLines(join(dir, 'sub-sessions', `${id}.jsonl`), events.map(encodeHistoryEvent))
  }
  const events = deriveReplayEvents(history, { sessionId: SESSION_ID, subSessions })
  writeLines(join(dir, 'replay.jsonl'), events.map(encodeEvent))
})

describe('golden replay', () => {
  test('the fixture is the long realistic session it claims to be', () => {
    const { history, subSessions } = loadFixture()
    const events = deriveReplayEvents(history, { sessionId: SESSION_ID, subSessions })
    const main = events.filter((e) => e.sessionId === SESSION_ID)
    const count = (type: string) => main.filter((e) => e.type === type).length
    expect(count('turn_start')).toBeGreaterThanOrEqual(200)
    expect(count('tool_result')).toBeGreaterThanOrEqual(200)
    expect(count('interrupt')).toBeGreaterThanOrEqual(10)
    expect(count('assistant_image_delta')).toBeGreaterThan(0)
    expect(main.some((e) => e.type === 'user_message' && e.images)).toBe(true)
    expect(count('error')).toBeGreaterThan(0)
    expect(subSessions.size).toBeGreaterThanOrEqual(10)
    expect(events.length - main.length).toBeGreaterThan(100)
  })

  test('the derived replay equals the committed expectation, line for line', () => {
    const { history, subSessions } = loadFixture()
    const actual = deriveReplayEvents(history, { sessionId: SESSION_ID, subSessions }).map(encodeEvent)
    const expected = readLines(join(dir, 'replay.jsonl'))
    const firstDifference = actual.findIndex((line, i) => line !== expected[i])
    if (firstDifference !== -1) expect(actual[firstDifference]).toBe(expected[firstDifference])
    expect(actual.length).toBe(expected.length)
  })

  test('the committed expectation passes checkEventOrder', () => {
    const expected = readLines(join(dir, 'replay.jsonl')).map((line) => JSON.parse(line))
    expect(checkEventOrder(expected)).toEqual([])
  })

  test('replaySession over a file store holding the fixture gives the same events', async () => {
    const { history, subSessions } = loadFixture()
    const storeDir = mkdtempSync(join(tmpdir(), 'kode-golden-'))
    const store = createFileSessionStore({ dir: storeDir, fsync: false })
    try {
      await store.create({ id: SESSION_ID })
      await store.append(SESSION_ID, history)
      for (const [id, events] of subSessions) {
        await store.create({ id, parentSessionId: SESSION_ID, subAgent: { name: 'explore' } })
        await store.append(id, events)
      }
      const events = (await replaySession(store, SESSION_ID)).map(encodeEvent)
      expect(events).toEqual(readLines(join(dir, 'replay.jsonl')))
    } finally {
      await store.close()
      rmSync(storeDir, { recursive: true, force: true })
    }
  })
})
