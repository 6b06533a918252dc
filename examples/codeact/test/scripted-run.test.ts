import { checkEventOrder, decodeHistoryEvent, encodeHistoryEvent } from '@kode/protocol'
import { deriveReplayEvents, exportHtml } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { BUGGY_PROGRAM, FIXED_PROGRAM, runScriptedCodeAct } from '../src/index.js'

describe('a scripted CodeAct run', () => {
  test('the first program fails in a real subprocess, the model fixes it, and answers from its output', async () => {
    const { events, outcome, history } = await runScriptedCodeAct()

    expect(checkEventOrder(events)).toEqual([])
    expect(outcome).toMatchObject({ reason: 'completed', text: 'The sum is 5050.' })
    const calls = events.filter((event) => event.type === 'tool_call')
    expect(calls.map((call) => JSON.parse(call.arguments))).toEqual([
      { code: BUGGY_PROGRAM, language: 'javascript' },
      { code: FIXED_PROGRAM, language: 'javascript' },
    ])
    const results = events.filter((event) => event.type === 'tool_result')
    expect(results.map((result) => result.status)).toEqual(['error', 'success'])
    expect(results[0]!.result).toMatch(/ReferenceError: totl is not defined[\s\S]*\[exit code 1\]$/)
    expect(results[1]!.result).toBe('5050')

    // Typed history like a native run's: it round-trips, replays and exports.
    for (const record of history) expect(decodeHistoryEvent(encodeHistoryEvent(record))).toEqual(record)
    const replay = deriveReplayEvents(history)
    expect(checkEventOrder(replay)).toEqual([])
    expect(replay.filter((event) => event.type === 'tool_result')).toHaveLength(2)
    expect(exportHtml(history)).toContain('totl is not defined')
  })
})
